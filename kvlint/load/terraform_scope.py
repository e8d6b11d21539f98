"""What names mean while terraform_eval.py evaluates an expression: the module's `var.x` / `local.x`
(a local evaluated once, when first named), the names a caller binds, and the budget every evaluation
of one module shares (terraform_eval.py's docstring gives the bounds)."""

from __future__ import annotations

from typing import Any

from kvlint.load import terraform_functions as fns

STEPS_MAX = 100_000  # per scope: one module's (one file's) evaluations together
DEPTH_MAX = 40
ITEMS_MAX = fns.ITEMS_MAX
Unknown = fns.Unknown
is_known = fns.is_known
ROOTS = ("var", "local")  # names `known` holds (`var.x`, `local.x`)


class Exhausted(Exception):
    """A bound was passed: the whole evaluation is unknown."""


class _Module:
    """The names one module states, shared by every scope of an evaluation (and its budget)."""

    def __init__(self, known: dict[str, Any], files: Any = None) -> None:
        self.known = known
        self.files = files  # reads `file()` / `templatefile()` of the repository (Scope docstring)
        self.raw: dict[str, dict[str, Any]] = {r: {} for r in ROOTS}
        for key, value in known.items():
            root, _, name = key.partition(".")
            if root in self.raw and name:
                self.raw[root][name] = value
        self.done: dict[tuple[str, str], Any] = {}
        self.busy: set[tuple[str, str]] = set()
        self.steps = STEPS_MAX


class Scope:
    """What names mean in one evaluation: the module's `known` (`var.x` / `local.x` as written, locals
    evaluated when first named) and the names a caller binds (`each`, an iterator, a for's names).
    `files(fn, path, vars)` gives the text of `file(path)` / `templatefile(path, vars)` (None: not
    read; terraform_files.py keeps it inside the repository); without it those calls are unknown."""

    def __init__(self, known: dict[str, Any], bound: dict[str, Any] | None = None, files: Any = None) -> None:
        self.module = _Module(known, files)
        self.bound = dict(bound or {})

    def bind(self, names: dict[str, Any]) -> Scope:
        """The same module names, with more bound (a for expression's key and value)."""
        child = Scope({})
        child.module, child.bound = self.module, {**self.bound, **names}
        return child

    def spend(self, n: int = 1) -> None:
        self.module.steps -= n
        if self.module.steps < 0:
            raise Exhausted


class Root:
    """A bare name (`var`, `local`, `module`, `data`, `each` unbound): only an attribute makes it a value."""

    def __init__(self, name: str) -> None:
        self.name = name


def capped(value: Any, ev: Any, node: Any) -> Any:
    """A collection built, counted against the budget; unknown past ITEMS_MAX items."""
    if len(value) > ITEMS_MAX:
        return Unknown(ev.text(node))
    ev.scope.spend(len(value))
    return value
