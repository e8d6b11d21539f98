"""Function calls and for expressions, as terraform_eval.py evaluates them (a part of its evaluator:
`_Calls` is mixed into terraform_eval._Eval). `try` / `can` see errors, not unknowns: an argument kvlint
cannot evaluate decides nothing, so the call is unknown (developer.hashicorp.com/terraform/language/
functions/try). `file` / `templatefile` read through the scope's `files` (terraform_files.py reader),
`yamldecode` with kvlint's own bounded YAML reader (load/compose.py)."""

from __future__ import annotations

from typing import Any

from kvlint.load import terraform_functions as fns
from kvlint.load.terraform_scope import Scope, Unknown, capped, is_known

Error = fns.Error
STRING_MAX = fns.STRING_MAX


class _Calls:
    """The evaluator's rules for calls and for expressions (the host class gives `value`, `text`,
    `_parts`, `src` and `scope`)."""

    def __init__(self, src: str, scope: Scope) -> None:
        self.src = src  # the text the tree's positions index
        self.scope = scope

    def value(self, node: Any, depth: int) -> Any:  # pragma: no cover - the host's
        raise NotImplementedError

    def text(self, node: Any) -> str:  # pragma: no cover - the host's
        raise NotImplementedError

    @staticmethod
    def _parts(node: Any) -> list[Any]:  # pragma: no cover - the host's
        raise NotImplementedError

    # ---- functions

    def _function_call(self, parts, depth, node):
        name = str(parts[0].children[0])
        args_node = next((p for p in parts if getattr(p, "data", None) == "arguments"), None)
        arg_nodes = [a for a in self._parts(args_node) if getattr(a, "data", None)] if args_node else []
        expand = args_node is not None and any(
            getattr(t, "type", None) == "ELLIPSIS" for t in args_node.children
        )
        if name in ("try", "can"):
            return self._try(name, arg_nodes, depth, node)
        args = [self.value(a, depth) for a in arg_nodes]
        if expand:
            if not args or not isinstance(args[-1], list):
                return Unknown(self.text(node))
            args = args[:-1] + args[-1]
        if name in ("file", "templatefile", "yamldecode"):
            return self._file(name, args, node)
        got = fns.call(name, args, self.text(node))
        if isinstance(got, (list, dict)):
            self.scope.spend(len(got))
        return got

    def _file(self, name: str, args: list[Any], node: Any) -> Any:
        """`file` / `templatefile` of a file of the repository (the scope's `files`), `yamldecode`."""
        if not args or not all(is_known(a) for a in args):
            return Unknown(self.text(node))
        if name == "yamldecode":
            return _yaml_value(args[0]) if len(args) == 1 else Unknown(self.text(node))
        reader = self.scope.module.files
        if reader is None or not isinstance(args[0], str):
            return Unknown(self.text(node))
        text = reader(name, args[0], args[1] if len(args) > 1 else {})
        return text if isinstance(text, str) and len(text) <= STRING_MAX else Unknown(self.text(node))

    def _try(self, name, arg_nodes, depth, node):
        """`try(a, b, ...)`: the first argument that evaluates without an error; an unknown one
        decides nothing (it might fail or not), so the result is unknown. `can(a)`: whether it does."""
        for a in arg_nodes:
            try:
                value = self.value(a, depth)
            except Error:
                if name == "can":
                    return False
                continue
            if not is_known(value):
                return Unknown(self.text(node))
            return True if name == "can" else value
        raise Error("try: no argument evaluated")

    # ---- for expressions

    def _for_tuple_expr(self, parts, depth, node):
        body = [p for p in parts if getattr(p, "data", None) is not None][1]
        out = []
        for inner in self._kept(parts, depth, node):
            if inner is None:
                return Unknown(self.text(node))
            out.append(inner.value(body, depth))
        return capped(out, self, node)

    def _for_object_expr(self, parts, depth, node):
        key_node, value_node = [p for p in parts if getattr(p, "data", None) is not None][1:3]
        group = any(getattr(p, "type", None) == "ELLIPSIS" for p in parts)
        out: dict[str, Any] = {}
        for inner in self._kept(parts, depth, node):
            key = fns.as_string(inner.value(key_node, depth)) if inner is not None else None
            if inner is None or isinstance(key, Unknown):
                return Unknown(self.text(node))
            value = inner.value(value_node, depth)
            if group:
                out.setdefault(key, []).append(value)
            elif key in out:
                raise Error(f"for expression: duplicate key {key!r}")
            else:
                out[key] = value
        return capped(out, self, node)

    def _kept(self, parts: list[Any], depth: int, node: Any):
        """An evaluator per element the for's `if` keeps, its names bound; a None, last, when the
        collection or a condition is unknown (the whole for expression is then unknown)."""
        intro = next(p for p in parts if getattr(p, "data", None) == "for_intro")
        cond = next((p for p in parts if getattr(p, "data", None) == "for_cond"), None)
        for names in self._iterate(intro, depth, node):
            if names is None:
                yield None
                return
            inner = type(self)(self.src, self.scope.bind(names))
            test = inner.value(self._parts(cond)[-1], depth) if cond is not None else True
            if isinstance(test, Unknown):
                yield None
                return
            if not isinstance(test, bool):
                raise Error("for condition not a boolean")
            if test:
                yield inner

    def _iterate(self, intro: Any, depth: int, node: Any):
        """Each element's names ({key: ..., value: ...}), or one None when the collection is unknown."""
        names = [str(p.children[0]) for p in self._parts(intro) if getattr(p, "data", None) == "identifier"]
        coll_node = [p for p in self._parts(intro) if getattr(p, "data", None) not in (None, "identifier")][
            -1
        ]
        coll = self.value(coll_node, depth)
        if isinstance(coll, dict):
            pairs = sorted(coll.items())  # a map iterates in its keys' lexical order
        elif isinstance(coll, list):
            pairs = list(enumerate(coll))
        else:
            yield None
            return
        for k, v in pairs:
            self.scope.spend()
            yield {names[0]: k, names[1]: v} if len(names) == 2 else {names[0]: v}


def _yaml_value(text: Any) -> Any:
    """`yamldecode`: one YAML document's value (kvlint's bounded reader, load/compose.py), unknown when
    the text is not one document of YAML."""
    if not isinstance(text, str):
        raise Error("yamldecode: not a string")
    from kvlint.load.compose import compose
    from kvlint.load.tree import to_plain as tree_plain

    docs, issues = compose(text, "<yamldecode>")
    if issues or len(docs) != 1:
        return Unknown("yamldecode(...)")
    return tree_plain(docs[0].root)
