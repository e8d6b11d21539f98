"""A Terraform variable's value given its type's defaults (terraform_eval.py reads the type expression
with its own parser)."""

from __future__ import annotations

from typing import Any

from kvlint.load.terraform_eval import Error, Scope, _Eval, _parse
from kvlint.load.terraform_scope import DEPTH_MAX, Exhausted


def typed(value: Any, type_text: str) -> Any:
    """A variable's value converted to its `type` as far as objects' optional attributes go: an
    attribute `optional(T, default)` the value leaves out is that default, `optional(T)` null
    (developer.hashicorp.com/terraform/language/expressions/type-constraints, "Optional Object
    Type Attributes"); the value as given when the type is not read."""
    text = type_text[2:-1] if type_text.startswith("${") and type_text.endswith("}") else type_text
    tree, src = _parse("${" + text + "}")
    if tree is None:
        return value
    try:
        return _Typer(src).convert(value, tree, 0)
    except (Exhausted, RecursionError, Error, ValueError, OverflowError):
        return value


class _Typer(_Eval):
    def __init__(self, src: str) -> None:
        super().__init__(src, Scope({}))

    def convert(self, value: Any, node: Any, depth: int) -> Any:
        if depth > DEPTH_MAX:
            raise Exhausted
        while getattr(node, "data", None) == "expr_term":
            node = self._parts(node)[0]
        if getattr(node, "data", None) != "function_call":
            return value
        name, args = self._call(node)
        if name in ("list", "set") and isinstance(value, list) and args:
            return [self.convert(v, args[0], depth + 1) for v in value]
        if name == "map" and isinstance(value, dict) and args:
            return {k: self.convert(v, args[0], depth + 1) for k, v in value.items()}
        if name == "object" and isinstance(value, dict) and args:
            return self._object_type(value, args[0], depth)
        return value

    def _call(self, node: Any) -> tuple[str, list[Any]]:
        parts = self._parts(node)
        args = next((p for p in parts if getattr(p, "data", None) == "arguments"), None)
        return str(parts[0].children[0]), [
            a for a in self._parts(args) if getattr(a, "data", None)
        ] if args else []

    def _object_type(self, value: dict[str, Any], spec: Any, depth: int) -> dict[str, Any]:
        while getattr(spec, "data", None) == "expr_term":
            spec = self._parts(spec)[0]
        if getattr(spec, "data", None) != "object":
            return value
        out = dict(value)
        for elem in self._parts(spec):
            if getattr(elem, "data", None) != "object_elem":
                continue
            key, tnode = self._key(elem.children[0], depth), elem.children[-1]
            inner = tnode
            while getattr(inner, "data", None) == "expr_term":
                inner = self._parts(inner)[0]
            optional = getattr(inner, "data", None) == "function_call" and self._call(inner)[0] == "optional"
            targs = self._call(inner)[1] if optional else [tnode]
            if key in out:
                out[key] = self.convert(out[key], targs[0], depth + 1) if targs else out[key]
            elif optional:
                default = self.value(targs[1], depth) if len(targs) > 1 else None
                out[key] = self.convert(default, targs[0], depth + 1) if targs else default
        return out
