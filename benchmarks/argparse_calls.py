"""One add_argument call's choices, as benchmarks/engine_choices.py reads them: an explicit `choices=`, or
vLLM's `**kwargs["field"]` of `kwargs = get_kwargs(SomeConfig)` (the field's annotation as get_kwargs turns it
into argparse keywords, vllm==0.9.2:vllm/engine/arg_utils.py:171, after the function's own
`kwargs["field"]["type"] = ...`)."""

from __future__ import annotations

import ast
import contextlib

from engine_choices import Reader, Source, Unknown, _name

TYPES = ("str", "int", "float")  # argparse types whose conversion kvlint repeats (others: values as written)


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _type_of(call: ast.Call) -> str | None:
    node = _keyword(call, "type")
    if node is None:
        return "str"
    text = ast.unparse(node)
    return text if text in TYPES else f"other:{text}"


def call_choices(reader: Reader, call: ast.Call, kwargs: Kwargs) -> dict | None:
    """One add_argument call's choices entry: {"type", "values"} or {"unjudged": expression}; None where
    the option takes any value. `kwargs`: what get_kwargs gave in the calling function."""
    explicit = _keyword(call, "choices")
    if explicit is not None:
        return _explicit(reader, explicit, _type_of(call))
    for k in call.keywords:
        if k.arg is not None:
            continue
        if isinstance(k.value, ast.Subscript) and isinstance(k.value.slice, ast.Constant):
            owner, key = _name(k.value.value), str(k.value.slice.value)
            if owner in kwargs.classes:
                return kwargs.field(reader, owner, key)
    return None


def _explicit(reader: Reader, node: ast.AST, kind: str) -> dict | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    try:
        values = reader.values(node)
    except Unknown:
        return {"unjudged": ast.unparse(node)}
    return {"type": kind, "values": sorted({_text(v) for v in values})}


class Kwargs:
    """In one function: the names bound to `get_kwargs(Class)` -> (module, class), and the keys it sets
    after (`kwargs["field"]["type"] = ...`)."""

    def __init__(self, scope: ast.AST, module: str) -> None:
        self.classes: dict[str, tuple[str, str]] = {}
        self.overrides: dict[tuple[str, str], dict[str, ast.AST]] = {}
        self.locals: dict[str, ast.AST] = {}
        bound: dict[str, int] = {}
        for node in ast.walk(scope):
            for target in _bound_names(node):
                bound[target] = bound.get(target, 0) + 1
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name):
                self.locals[target.id] = value
            if (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Call)
                and _name(value.func) == "get_kwargs"
                and len(value.args) == 1
                and isinstance(value.args[0], ast.Name)
            ):
                self.classes[target.id] = (module, value.args[0].id)
            elif (
                isinstance(target, ast.Subscript)
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.value, ast.Subscript)
                and isinstance(target.value.slice, ast.Constant)
            ):
                key = (_name(target.value.value), str(target.value.slice.value))
                self.overrides.setdefault(key, {})[str(target.slice.value)] = value

        self.locals = {k: v for k, v in self.locals.items() if bound.get(k) == 1}  # bound once, never changed

    def field(self, reader: Reader, owner: str, key: str, cls: str = "") -> dict | None:
        """The choices of `owner[key]` (owner = get_kwargs(Class); `cls`: the class a classmethod's `cls`
        is) after the function's own changes."""
        told = self.overrides.get((owner, key), {})
        if "choices" in told:
            return _explicit(reader, told["choices"], "other:set" if "type" in told else "str")
        module, name = self.classes[owner]
        got = field_choices(reader.source, module, cls if name == "cls" and cls else name, key)
        if got is not None and "type" in told and "values" in got:
            got["type"] = "other:" + ast.unparse(told["type"])
        return got


def field_choices(source: Source, module: str, cls: str, field: str) -> dict | None:
    """get_kwargs' choices for one dataclass field of `cls` (its bases in the same module followed)."""
    try:
        where, node = source.binding(module, cls)
    except Unknown:
        return {"unjudged": f"get_kwargs({cls})[{field!r}]"}
    todo = [node]
    while todo:
        c = todo.pop()
        if not isinstance(c, ast.ClassDef):
            continue
        for stmt in c.body:
            if isinstance(stmt, ast.AnnAssign) and _name(stmt.target) == field:
                try:
                    got = Reader(source, where).annotation(stmt.annotation)
                except Unknown:
                    return {"unjudged": ast.unparse(stmt.annotation)}
                if got is None:
                    return None
                kind, values, optional = got
                return {
                    "type": f"optional:{kind}" if optional else kind,
                    "values": sorted({_text(v) for v in values} | ({"None"} if optional else set())),
                }
        for b in c.bases:
            if isinstance(b, ast.Name):
                with contextlib.suppress(Unknown):
                    todo.append(source.binding(where, b.id)[1])
    return {"unjudged": f"get_kwargs({cls})[{field!r}]: field not found"}


def _text(value: object) -> str:
    """A choice as argparse's message shows it (str()); None as "None"."""
    return str(value)


def _bound_names(node: ast.AST) -> list[str]:
    """Names a statement binds or changes in place (`x = ...`, `x += ...`, `x.append(...)`, a loop)."""
    if isinstance(node, ast.Assign):
        return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("append", "extend", "insert", "remove", "pop", "update", "add")
        and isinstance(node.func.value, ast.Name)
    ):
        return [node.func.value.id, node.func.value.id]  # changed after it is bound: not data
    return []
