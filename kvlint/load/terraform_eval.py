"""A small, bounded evaluator of Terraform expressions, for what kvlint reads from .tf files.

python-hcl2 gives an attribute that is not a literal as its text (`${concat(var.a, var.b)}`); this
module parses that text again with python-hcl2's own grammar (its raw Lark tree) and evaluates it
over what the module states: `var.x` (a variable's default, a tfvars value), `local.x` (evaluated
when first named), and the names a caller binds (`each.key` / `each.value` of a `for_each`, a
dynamic block's iterator). It knows the expression forms of the Terraform language
(developer.hashicorp.com/terraform/language/expressions: literals, templates, operators,
conditionals, for expressions, splats, indexes and attributes) and the functions of
terraform_functions.py.

What it cannot know stays unknown, never guessed: a resource's or a module's attribute (`module.x.y`,
`data.x`), a variable with no stated value, a function it does not model, a condition on an unknown.
An unknown inside a list or an object leaves the rest known (`[{name = "a", zone = <unknown>}]`);
`to_plain` writes it back as its `${...}` text, the placeholder the readers already skip.

Bounded (a hostile file must not hang a run, security review 3): each evaluation spends at most
STEPS_MAX steps (nodes evaluated, items iterated), nests at most DEPTH_MAX deep, reads texts of at
most TEXT_MAX characters and builds collections of at most ITEMS_MAX items and strings of at most
STRING_MAX characters; past a bound the value is unknown.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from kvlint.load import terraform_functions as fns
from kvlint.load.terraform_calls import _Calls
from kvlint.load.terraform_scope import DEPTH_MAX, ROOTS, STEPS_MAX, Exhausted, Root, Scope, capped, is_known

__all__ = ["STEPS_MAX", "Scope", "is_known"]
TEXT_MAX = 16_384
ITEMS_MAX = fns.ITEMS_MAX
STRING_MAX = fns.STRING_MAX
Unknown = fns.Unknown
Error = fns.Error


def evaluate(text: str, scope: Scope, depth: int = 0) -> Any:
    """The value of an attribute's text as python-hcl2 gives it: `${expr}` alone is that expression's
    value (of any type), other text a string template; Unknown when not known."""
    tree, src = _parse(text)
    whole = text[2:-1] if text.startswith("${") and text.endswith("}") else text
    if tree is None:
        return Unknown(whole)
    try:
        return _Eval(src, scope).value(tree, depth)
    except (Exhausted, RecursionError, Error, ValueError, OverflowError):
        return Unknown(whole)  # ValueError: an int of more digits than Python converts


def value_of(raw: Any, scope: Scope, depth: int = 0) -> Any:
    """A value python-hcl2 gives (lists, objects, strings that may hold `${...}`), evaluated."""
    if depth > DEPTH_MAX:
        raise Exhausted
    scope.spend()
    if isinstance(raw, dict):
        return {k: value_of(v, scope, depth + 1) for k, v in raw.items() if not str(k).startswith("__")}
    if isinstance(raw, list):
        return [value_of(v, scope, depth + 1) for v in raw]
    if isinstance(raw, str) and "${" in raw:
        return evaluate(raw, scope, depth + 1)
    return raw


def _named(scope: Scope, root: str, name: str, depth: int) -> Any:
    """`var.name` / `local.name`: its value, evaluated once (a local that names itself is unknown)."""
    m, key = scope.module, (root, name)
    if key in m.done:
        return m.done[key]
    if name not in m.raw.get(root, {}) or key in m.busy:
        return Unknown(f"{root}.{name}")
    m.busy.add(key)
    try:
        own = Scope({})
        own.module = m  # a local sees the module's names, no caller's `each`
        value = value_of(m.raw[root][name], own, depth + 1)
    finally:
        m.busy.discard(key)
    m.done[key] = value
    return value


def settled(raw: Any, scope: Scope) -> Any:
    """A `${...}` text's value as the readers' plain data (unknown parts as their text), None when the
    whole is unknown."""
    try:
        got = value_of(raw, scope)
    except (Exhausted, RecursionError):
        return None
    if isinstance(got, (Unknown, Root)):
        return None
    return to_plain(got)


def to_plain(value: Any, depth: int = 0) -> Any:
    """The value as the readers' plain data: each unknown part written back as its `${...}` text."""
    if isinstance(value, Unknown) or depth > DEPTH_MAX:
        return f"${{{value.text}}}" if isinstance(value, Unknown) else "${...}"
    if isinstance(value, dict):
        return {k: to_plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v, depth + 1) for v in value]
    return value


@lru_cache(maxsize=512)
def _parse(text: str) -> tuple[Any, str]:
    """(the Lark tree of the text's expression, the source its positions index), (None, "") when it
    does not parse or is too long."""
    if len(text) > TEXT_MAX:
        return None, ""
    try:
        from hcl2.api import parses_to_tree
    except ImportError:
        return None, ""
    candidates = ["v = " + text[2:-1]] if text.startswith("${") and text.endswith("}") else []
    if "\n" not in text and "\\" not in text:  # a one-line template: the text of a quoted string (a
        candidates.append('v = "' + text + '"')  # heredoc's text, its escapes already read, is not one)
    for src in candidates:
        try:
            tree = parses_to_tree(src)
        except Exception:  # noqa: BLE001 - lark's errors: not an expression python-hcl2 reads
            continue
        attrs = [c for c in tree.children[0].children if getattr(c, "data", None) == "attribute"]
        if len(attrs) == 1:
            return attrs[0].children[-1], src
    return None, ""


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _unescape(s: str) -> str:
    return re.sub(
        r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)",
        lambda m: (
            chr(int(m.group(1)[1:], 16)) if len(m.group(1)) > 1 else _ESCAPES.get(m.group(1), m.group(0))
        ),
        s,
    )


def _heredoc(token: str, trim: bool) -> str | Unknown:
    lines = token.split("\n")[1:-2]  # the marker line, the closing marker and the newline after it
    if trim:
        indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
        lines = [x[indent:] for x in lines]
    text = "\n".join(lines) + ("\n" if lines else "")
    return (
        Unknown("<<heredoc>>")
        if "${" in text.replace("$${", "") or "%{" in text
        else text.replace("$${", "${")
    )


class _Eval(_Calls):
    """One expression's evaluation: the tree's rules, each a method (`_conditional`, `_tuple`, ...;
    calls and for expressions: terraform_calls.py)."""

    def text(self, node: Any) -> str:
        meta = getattr(node, "meta", None)
        if meta is None or getattr(meta, "empty", True):
            return str(node)
        return self.src[meta.start_pos : meta.end_pos].strip()

    def eval(self, node: Any, depth: int) -> Any:
        if depth > DEPTH_MAX:
            raise Exhausted
        self.scope.spend()
        rule = getattr(node, "data", None)
        if rule is None:  # a token
            return Unknown(str(node))
        method = getattr(self, f"_{rule}", None)
        if method is None:  # template directives, what the grammar has and this module does not model
            return Unknown(self.text(node))
        value = method(self._parts(node), depth + 1, node)
        if isinstance(value, str) and len(value) > STRING_MAX:
            return Unknown(self.text(node))
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > fns.INT_MAX:
            return Unknown(self.text(node))
        return value

    @staticmethod
    def _parts(node: Any) -> list[Any]:
        return [c for c in node.children if getattr(c, "data", None) != "new_line_or_comment"]

    # ---- terms

    def _expr_term(self, parts, depth, node):
        inner = [p for p in parts if getattr(p, "type", None) not in ("LPAR", "RPAR")]
        return self.eval(inner[0], depth) if inner else Unknown(self.text(node))

    def _int_lit(self, parts, depth, node):
        digits = str(parts[0])
        return int(digits) if len(digits) <= 18 else Unknown(digits[:40])

    def _float_lit(self, parts, depth, node):
        f = float(str(parts[0]))
        return int(f) if f.is_integer() else f

    def _literal_value(self, parts, depth, node):
        return {"true": True, "false": False, "null": None}[str(parts[0])]

    def _identifier(self, parts, depth, node):
        name = str(parts[0])
        if name in self.scope.bound:
            return self.scope.bound[name]
        if name == "path" and self.scope.module.files is not None:
            return {"module": ".", "root": ".", "cwd": "."}  # the .tf file's folder: the reader's paths
        return Root(name)

    def _string(self, parts, depth, node):
        out: list[str] = []
        for part in parts:
            if getattr(part, "data", None) != "string_part":
                continue
            (piece,) = part.children
            if getattr(piece, "data", None) == "interpolation":
                value = self.eval(piece.children[1], depth)
                text = fns.as_string(value)
                if isinstance(text, Unknown) or sum(map(len, out)) + len(text) > STRING_MAX:
                    return Unknown(self.text(node).strip('"'))
                out.append(text)
            elif getattr(piece, "type", None) in ("ESCAPED_INTERPOLATION", "ESCAPED_DIRECTIVE"):
                out.append(str(piece)[1:])  # `$${` / `%%{`: the literal text
            elif getattr(piece, "data", None) is not None:  # a %{ } directive
                return Unknown(self.text(node).strip('"'))
            else:
                out.append(_unescape(str(piece)))
        return "".join(out)

    def _heredoc_template(self, parts, depth, node):
        return _heredoc(str(parts[0]), trim=False)

    def _heredoc_template_trim(self, parts, depth, node):
        return _heredoc(str(parts[0]), trim=True)

    def _tuple(self, parts, depth, node):
        items = [self.value(p, depth) for p in parts if getattr(p, "data", None) is not None]
        return capped(items, self, node)

    def _object(self, parts, depth, node):
        out: dict[str, Any] = {}
        for elem in parts:
            if getattr(elem, "data", None) != "object_elem":
                continue
            key_node, value_node = elem.children[0], elem.children[-1]
            key = self._key(key_node, depth)
            if isinstance(key, Unknown):
                return Unknown(self.text(node))
            out[key] = self.value(value_node, depth)
        return capped(out, self, node)

    def _key(self, key_node: Any, depth: int) -> Any:
        inner = key_node.children[0]
        term = self._parts(inner)[0] if getattr(inner, "data", None) == "expr_term" else None
        if getattr(term, "data", None) == "identifier" or getattr(inner, "data", None) == "keyword":
            return str((term or inner).children[0])  # `name = ...`: the key is the name itself
        return fns.as_string(self.value(inner, depth))

    def value(self, node: Any, depth: int) -> Any:
        """A node's value where a bare root (`var`, `module`) is not a value: unknown."""
        got = self.eval(node, depth)
        return Unknown(self.text(node)) if isinstance(got, Root) else got

    # ---- attributes, indexes, splats

    def _get_attr_expr_term(self, parts, depth, node):
        base = self.eval(parts[0], depth)
        name = str(self._parts(parts[1])[-1].children[0])
        return self._step(base, name, node, depth)

    def _index_expr_term(self, parts, depth, node):
        base = self.eval(parts[0], depth)
        index = parts[1]
        if index.data == "short_index":
            key: Any = int(str(self._parts(index)[-1]))
        else:
            key = self.value([p for p in self._parts(index) if getattr(p, "data", None)][0], depth)
        return self._step(base, key, node, depth)

    def _step(self, base: Any, key: Any, node: Any, depth: int) -> Any:
        if isinstance(base, Root):
            if base.name in ROOTS and isinstance(key, str):
                return _named(self.scope, base.name, key, depth)
            return Unknown(self.text(node))
        return fns.index(base, key, self.text(node))

    def _attr_splat_expr_term(self, parts, depth, node):
        return self._splat(parts, depth, node)

    def _full_splat_expr_term(self, parts, depth, node):
        return self._splat(parts, depth, node)

    def _splat(self, parts, depth, node):
        base = self.value(parts[0], depth)
        if isinstance(base, Unknown):
            return Unknown(self.text(node))
        items = base if isinstance(base, list) else [] if base is None else [base]
        steps = [s for s in self._parts(parts[1]) if getattr(s, "data", None) is not None]
        out = []
        for item in items:
            self.scope.spend()
            for s in steps:
                if s.data == "get_attr":
                    item = fns.index(item, str(self._parts(s)[-1].children[0]), self.text(node))
                elif s.data == "short_index":
                    item = fns.index(item, int(str(self._parts(s)[-1])), self.text(node))
                else:
                    key = self.value([p for p in self._parts(s) if getattr(p, "data", None)][0], depth)
                    item = fns.index(item, key, self.text(node))
            out.append(item)
        return capped(out, self, node)

    # ---- operators

    def _conditional(self, parts, depth, node):
        cond, yes, no = (p for p in parts if getattr(p, "data", None) is not None)
        test = self.value(cond, depth)
        if isinstance(test, bool):
            return self.value(yes if test else no, depth)
        if not isinstance(test, Unknown):
            raise Error("a condition that is not a boolean")
        a, b = self.value(yes, depth), self.value(no, depth)
        return _common(a, b, self.text(node), 0)  # what both ways give is known

    def _binary_op(self, parts, depth, node):
        left_node, term = parts[0], parts[1]
        op_node, right_node = [p for p in self._parts(term)]
        op = str(op_node.children[0])
        left = self.value(left_node, depth)
        if op in ("&&", "||") and isinstance(left, bool) and left == (op == "||"):
            return left  # short-circuit only when it decides (Terraform evaluates both, same answer)
        right = self.value(right_node, depth)
        return fns.binary(op, left, right, self.text(node))

    def _unary_op(self, parts, depth, node):
        op, operand = str(parts[0]), self.value(parts[1], depth)
        return fns.unary(op, operand, self.text(node))


def _common(a: Any, b: Any, text: str, depth: int) -> Any:
    """What a conditional on an unknown gives either way: equal parts known, the rest unknown (two
    objects of pools that differ in their zones alone still agree on the machine type)."""
    if depth > DEPTH_MAX:
        return Unknown(text)
    if isinstance(a, dict) and isinstance(b, dict):
        return {
            k: _common(a.get(k, Unknown(text)), b.get(k, Unknown(text)), text, depth + 1) for k in {**a, **b}
        }
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [_common(x, y, text, depth + 1) for x, y in zip(a, b, strict=True)]
    if isinstance(a, Unknown) or isinstance(b, Unknown) or isinstance(a, Root) or isinstance(b, Root):
        return Unknown(text)
    return a if type(a) is type(b) and a == b else Unknown(text)
