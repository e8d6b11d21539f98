"""The import graph: no circle, and no import from a lower stage to a higher one.

The stage list is pyproject.toml's [tool.test-layers] table; every module of the package must belong
to exactly one stage, so a new module is placed in the list before it can land. Function-level imports count:
deferring an import hides a dependency from the reader, not from the graph.
"""

from __future__ import annotations

import ast

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

from conftest import ROOT

PACKAGE = ROOT / "kvlint"


def _stages() -> list[tuple[str, list[str]]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    stages = data["tool"]["test-layers"]["stages"]
    return [(s["name"], list(s["paths"])) for s in stages]


def _modules() -> dict[str, str]:
    """Dotted module name -> path relative to the repository root."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = rel
    return out


def _imports(modules: dict[str, str]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, rel in modules.items():
        tree = ast.parse((ROOT / rel).read_text(), rel)
        is_package = rel.endswith("__init__.py")
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in modules else base)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _entry_of(rel: str, stages: list[tuple[str, list[str]]]) -> tuple[int, str]:
    """(stage index, the list entry naming the module: a folder or the module's own path)."""
    found = [
        (i, p)
        for i, (_, paths) in enumerate(stages)
        for p in paths
        if rel == p or (p.endswith("/") and rel.startswith(p))
    ]
    assert len(found) == 1, (
        f"{rel} belongs to {len(found)} stages of pyproject.toml's [tool.test-layers]; add it to exactly one"
    )
    return found[0]


def _stage_of(rel: str, stages: list[tuple[str, list[str]]]) -> int:
    return _entry_of(rel, stages)[0]


def test_every_module_has_one_stage():
    stages = _stages()
    for rel in _modules().values():
        _stage_of(rel, stages)


def test_no_import_runs_up_a_stage():
    stages = _stages()
    modules = _modules()
    graph = _imports(modules)
    upward = []
    for name, targets in graph.items():
        own = _stage_of(modules[name], stages)
        for t in targets:
            other = _stage_of(modules[t], stages)
            if other > own:
                upward.append(f"{name} ({stages[own][0]}) imports {t} ({stages[other][0]})")
    assert not upward, "imports from a lower stage to a higher one:\n" + "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    cycles = _cycles(_imports(_modules()))
    assert not cycles, "modules that import each other: " + "; ".join(" <-> ".join(c) for c in cycles)


def _entry_graph(stages: list[tuple[str, list[str]]]) -> dict[str, set[str]]:
    """The import graph between the list's entries: a folder counts as one node."""
    modules = _modules()
    out: dict[str, set[str]] = {}
    for name, targets in _imports(modules).items():
        mine = _entry_of(modules[name], stages)[1]
        out.setdefault(mine, set()).update(_entry_of(modules[t], stages)[1] for t in targets)
    return {k: v - {k} for k, v in out.items()}


def test_no_two_entries_of_a_stage_import_each_other():
    """The stage check cannot see two entries of one stage that depend on each other (a folder and a
    module beside it: fix/ called lint.lint_text while lint.py imported fix.materialize); an
    entry is one room, and no two rooms import each other."""
    cycles = _cycles(_entry_graph(_stages()))
    assert not cycles, "entries of the stage list that import each other: " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_checker_sees_a_circle_and_an_upward_import():
    """The graph reader itself: a two-module circle is found, function-level imports count."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    graph = _imports(_modules())
    assert "kvlint.extract.pod.workloads" in graph["kvlint.extract.kinds.ray"]  # imported at module level
    # imported in a function
    assert "kvlint.extract.pod.engine_args" in graph["kvlint.extract.kinds.kserve_llm"]
