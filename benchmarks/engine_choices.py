"""The `choices` of each argparse option of a vLLM or SGLang release, read from its python files with `ast`.

Called by benchmarks/engine_flags.py for every release it reads. argparse checks a value against an option's
`choices` after its `type` converts it, and exits at start-up with "argument --x: invalid choice: 'v'
(choose from ...)" (CPython Lib/argparse.py `_check_value`). The choices are read where the source states
them as data:

- `choices=[...]`, a tuple or set of constants, `[*X, None]`, `X + [...]`, `list(X)`, `sorted(X)`,
  `X.keys()`, `get_args(Literal[...])`, `[f.value for f in SomeEnum]` over an Enum whose members are
  constants, a module-level name or class attribute bound once to one of those, followed through
  `from module import NAME` into the release's other files;
- vLLM 0.8 on, `**kwargs["field"]` of `kwargs = get_kwargs(SomeConfig)`: the field's annotation as
  vLLM's get_kwargs turns it into argparse keywords (vllm==0.9.2:vllm/engine/arg_utils.py:171): a bool
  first (BooleanOptionalAction, no choices), else a `Literal[...]` (or a name bound to one) gives
  choices of the literal's type, with "None" added when the annotation is Optional.

A choices expression that is none of those (a registry filled at run time, such as vLLM's
`ReasoningParserManager.reasoning_parsers` or SGLang's `ReasoningParser.DetectorMap` built from
imports) is kept as `unjudged` with the expression as written: kvlint says nothing of such an option's
values. The engine is never installed or imported.
"""

from __future__ import annotations

import ast
import os


class Unknown(Exception):
    """A choices expression that is not data in the source."""


class Source:
    """The python files of one release unzipped under `root`, each parsed once."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._trees: dict[str, ast.Module | None] = {}
        self._metavar: bool | None = None

    def str_literal_is_free(self) -> bool:
        """vLLM's literal_to_kwargs gives a `Literal[...] | str` field a metavar, not choices (any
        value), in the releases whose source says so (vllm==0.10.2:vllm/engine/arg_utils.py:125)."""
        if self._metavar is None:
            tree = self.tree("vllm.engine.arg_utils")
            fn = (
                next(
                    (
                        n
                        for n in ast.walk(tree)
                        if isinstance(n, ast.FunctionDef) and n.name == "literal_to_kwargs"
                    ),
                    None,
                )
                if tree is not None
                else None
            )
            self._metavar = fn is not None and "metavar" in ast.unparse(fn)
        return self._metavar

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            base = os.path.join(self.root, *module.split("."))
            for path in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.exists(path):
                    with open(path, encoding="utf-8") as fh:
                        self._trees[module] = ast.parse(fh.read())
                    break
            else:
                self._trees[module] = None
        return self._trees[module]

    def binding(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.AST]:
        """The module-level statement that binds `name` in `module` (followed through imports)."""
        tree = self.tree(module)
        if tree is None or depth > 6:
            raise Unknown(f"{module}.{name}")
        found: list[ast.AST] = []
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                found.append(node)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                found.append(node.value)
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == name
            ):
                if node.value is not None:
                    found.append(node.value)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        target = _absolute(module, node)
                        return self.binding(target, alias.name, depth + 1)
        if len(found) != 1:
            raise Unknown(f"{module}.{name}")  # unbound here, or bound more than once
        return module, found[0]


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")[: -node.level]
    return ".".join([*parts, node.module] if node.module else parts)


class Reader:
    """Evaluates choices expressions of one module of a release."""

    def __init__(self, source: Source, module: str, local: dict[str, ast.AST] | None = None) -> None:
        self.source = source
        self.module = module
        self.local = local or {}  # names the calling function binds once (SGLang's ATTN_BACKENDS = [...])

    def values(self, node: ast.AST, depth: int = 0) -> list:
        """The sequence an expression stands for (iterating a dict gives its keys, an Enum its members)."""
        if depth > 12:
            raise Unknown("too deep")
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            out: list = []
            for elt in node.elts:
                out += (
                    self.values(elt.value, depth + 1) if isinstance(elt, ast.Starred) else [self.scalar(elt)]
                )
            return out
        if isinstance(node, ast.Dict):
            return [self.scalar(k) for k in node.keys if k is not None]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.values(node.left, depth + 1) + self.values(node.right, depth + 1)
        if isinstance(node, ast.Subscript) and _name(node.value) in ("Literal", "typing.Literal"):
            return self._literal(node.slice, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.ListComp):
            return self._enum_values(node, depth)
        if isinstance(node, ast.Name | ast.Attribute):
            module, bound = self._bound(node)
            if isinstance(bound, ast.ClassDef):
                raise Unknown(f"the class {bound.name} iterated")
            return Reader(self.source, module).values(bound, depth + 1)
        raise Unknown(ast.unparse(node))

    def _literal(self, node: ast.AST, depth: int) -> list:
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        out: list = []
        for item in items:
            if isinstance(item, ast.Constant):
                out.append(item.value)
            else:
                out += self.values(item, depth + 1)  # a nested Literal or a name bound to one
        return out

    def _call(self, node: ast.Call, depth: int) -> list:
        func = _name(node.func)
        if func in ("list", "tuple", "sorted", "set", "get_args", "typing.get_args") and len(node.args) == 1:
            return self.values(node.args[0], depth + 1)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "keys" and not node.args:
            return self.values(node.func.value, depth + 1)
        raise Unknown(ast.unparse(node))

    def _enum_values(self, node: ast.ListComp, depth: int) -> list:
        """`[f.value for f in SomeEnum]`: the constant values of the Enum's members."""
        (gen,) = node.generators
        elt = node.elt
        if (
            gen.ifs
            or not isinstance(gen.target, ast.Name)
            or not isinstance(gen.iter, ast.Name | ast.Attribute)
        ):
            raise Unknown(ast.unparse(node))
        if not (isinstance(elt, ast.Attribute) and _name(elt.value) == gen.target.id and elt.attr == "value"):
            raise Unknown(ast.unparse(node))
        _module, cls = self._bound(gen.iter)
        if not isinstance(cls, ast.ClassDef) or not any("Enum" in ast.unparse(b) for b in cls.bases):
            raise Unknown(ast.unparse(node))
        out = []
        for stmt in cls.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                if not isinstance(stmt.value, ast.Constant):
                    raise Unknown(f"{cls.name}.{stmt.targets[0].id}")  # auto() and friends
                out.append(stmt.value.value)
        return out

    def scalar(self, node: ast.AST) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name | ast.Attribute):
            module, bound = self._bound(node)
            if isinstance(bound, ast.Constant):
                return bound.value
        raise Unknown(ast.unparse(node))

    def _bound(self, node: ast.AST) -> tuple[str, ast.AST]:
        """What a name or `Class.ATTR` is bound to in the calling function or at module level."""
        if isinstance(node, ast.Name) and node.id in self.local:
            return self.module, self.local[node.id]
        if isinstance(node, ast.Name):
            return self.source.binding(self.module, node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module, owner = self.source.binding(self.module, node.value.id)
            if isinstance(owner, ast.ClassDef):
                for stmt in owner.body:
                    if isinstance(stmt, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == node.attr for t in stmt.targets
                    ):
                        return module, stmt.value
                    if isinstance(stmt, ast.AnnAssign) and _name(stmt.target) == node.attr and stmt.value:
                        return module, stmt.value
        raise Unknown(ast.unparse(node))

    def annotation(self, node: ast.AST, depth: int = 0) -> tuple[str, list, bool] | None:
        """vLLM's get_kwargs over a field's annotation: (type, choices, optional) for a Literal, None for
        an annotation without one; a bool anywhere in it wins (BooleanOptionalAction)."""
        parts = self._union(node, depth)
        names = [_name(p) for _r, p in parts]
        if "bool" in names or ("str" in names and self.source.str_literal_is_free()):
            return None
        literal = [
            (r, p)
            for r, p in parts
            if isinstance(p, ast.Subscript) and _name(p.value) in ("Literal", "typing.Literal")
        ]
        if not literal:
            return None
        reader, first = literal[0]
        choices = reader._literal(first.slice, depth)
        kinds = {type(c).__name__ for c in choices}
        if len(kinds) != 1:
            raise Unknown("mixed literal")
        return kinds.pop(), sorted(choices), "None" in names

    def _union(self, node: ast.AST, depth: int) -> list[tuple[Reader, ast.AST]]:
        """The members of a Union / Optional / `A | B` / Annotated / SkipValidation, names followed, each
        with the reader of the module it is written in."""
        if depth > 8:
            raise Unknown("too deep")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node = ast.parse(node.value, mode="eval").body  # a string annotation
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._union(node.left, depth + 1) + self._union(node.right, depth + 1)
        if isinstance(node, ast.Subscript):
            head = _name(node.value).rsplit(".", 1)[-1]
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head == "Union":
                return [p for i in items for p in self._union(i, depth + 1)]
            if head == "Optional":
                return [*self._union(items[0], depth + 1), (self, ast.Name("None"))]
            if head in ("Annotated", "SkipValidation"):
                return self._union(items[0], depth + 1)
            return [(self, node)]
        if isinstance(node, ast.Name) and node.id not in (
            "str",
            "int",
            "float",
            "bool",
            "None",
            "dict",
            "list",
        ):
            try:
                module, bound = self.source.binding(self.module, node.id)
            except Unknown:
                return [(self, node)]
            if isinstance(bound, ast.Subscript | ast.BinOp):
                return Reader(self.source, module)._union(bound, depth + 1)
        if isinstance(node, ast.Constant) and node.value is None:
            return [(self, ast.Name("None"))]
        return [(self, node)]


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""
