"""The house figures of code-review-3 (issue 22), measured from the source with the AST.

    python benchmarks/house_figures.py [ROOT]

Prints, for the package under ROOT (default: this checkout):
- engine-name comparisons outside the engine packages (a string "vllm"/"sglang"/"tgi" compared with
  ==, !=, in, or used as a dict-literal key);
- imports of one engine's modules from outside the engine packages;
- writes onto a Deployment after extract: assignments to a Deployment field or its `extra` dict
  outside kvlint/extract/, kvlint/load/ and an engine package's launch readers (attribute names
  matched against the record's fields);
- distinct string keys used on an `extra` dict (subscript, get, in, setdefault, pop);
- functions over cyclomatic complexity 25 (radon, when installed).
These are proxies, counted the same way before and after a change; the review counted by hand.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ENGINES = {"vllm", "sglang", "tgi"}
ENGINE_DIRS = ("kvlint/engines/", "kvlint/capacity/engines/", "kvlint/extract/pod/engine_args/")
EXTRACT_DIRS = ("kvlint/extract/", "kvlint/load/")
# Inside an engine package, the modules that read a launch (extract-time writes, like extract's own;
# flag_sets.py records the flags an options reader met)
ENGINE_READERS = (
    "options.py",
    "launch.py",
    "backends.py",
    "llamacpp.py",
    "memory_options.py",
    "flag_sets.py",
)


def _modules(root: Path) -> dict[str, ast.Module]:
    out = {}
    for path in sorted((root / "kvlint").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        out[rel] = ast.parse(path.read_text(encoding="utf-8"), rel)
    return out


def _deployment_fields(trees: dict[str, ast.Module]) -> set[str]:
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in {"Deployment", "Stated"}:
                names.update(
                    s.target.id
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                )
    return names


def _is_engine_const(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and node.value in ENGINES:
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_engine_const(e) for e in node.elts)
    return False


def _engine_module(name: str) -> bool:
    parts = name.split(".")
    if name.startswith("kvlint.engines.") and len(parts) > 2 and parts[2] not in {"base", "registry"}:
        return True
    return name.startswith(("kvlint.capacity.engines.", "kvlint.extract.pod.engine_args.")) and any(
        e in parts[3] for e in ENGINES
    )


def _extra_key(node: ast.AST) -> str | None:
    def on_extra(value: ast.AST) -> bool:
        return isinstance(value, ast.Attribute) and value.attr == "extra"

    if isinstance(node, ast.Subscript) and on_extra(node.value):
        key = node.slice
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and on_extra(node.func.value):
        if node.func.attr in {"get", "setdefault", "pop"} and node.args:
            a = node.args[0]
            return a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None
    if isinstance(node, ast.Compare) and any(on_extra(c) for c in node.comparators):
        if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            return node.left.value
    return None


def figures(root: Path) -> dict[str, int]:
    trees = _modules(root)
    fields = _deployment_fields(trees)
    comparisons = imports = writes = 0
    files_comparing: set[str] = set()
    keys: set[str] = set()
    for rel, tree in trees.items():
        in_engine = rel.startswith(ENGINE_DIRS)
        reader = rel.startswith("kvlint/engines/") and rel.rsplit("/", 1)[-1] in ENGINE_READERS
        after_extract = (not rel.startswith(EXTRACT_DIRS) and not in_engine) or (
            rel.startswith(("kvlint/capacity/engines/", "kvlint/engines/")) and not reader
        )
        for node in ast.walk(tree):
            key = _extra_key(node)
            if key:
                keys.add(key)
            if in_engine:
                if isinstance(node, (ast.Assign, ast.AugAssign)) and after_extract:
                    writes += _writes(node, fields)
                continue
            if (
                isinstance(node, ast.Compare)
                and (_is_engine_const(node.left) or any(_is_engine_const(c) for c in node.comparators))
                or isinstance(node, ast.Dict)
                and any(k is not None and _is_engine_const(k) for k in node.keys)
            ):
                comparisons += 1
                files_comparing.add(rel)
            elif isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                imports += any(_engine_module(m) for m in mods)
            elif isinstance(node, ast.Import):
                imports += any(_engine_module(a.name) for a in node.names)
            elif isinstance(node, (ast.Assign, ast.AugAssign)) and after_extract:
                writes += _writes(node, fields)
    out = {
        "engine-name comparisons outside the engine packages": comparisons,
        "files with such comparisons": len(files_comparing),
        "engine-module imports from outside the engine packages": imports,
        "Deployment writes after extract (fields and extra)": writes,
        "distinct extra keys": len(keys),
    }
    try:
        from radon.complexity import cc_visit
    except ImportError:
        return out
    over = 0
    for rel in trees:
        blocks = cc_visit((root / rel).read_text(encoding="utf-8"))
        over += sum(1 for b in blocks if b.complexity > 25 and type(b).__name__ == "Function")
    out["functions over CC 25 (radon)"] = over
    return out


def _writes(node: ast.Assign | ast.AugAssign, fields: set[str]) -> int:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    n = 0
    for t in targets:
        if (
            (
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.attr in fields
                and t.value.id in {"d", "dep", "deployment"}
            )
            or isinstance(t, ast.Subscript)
            and isinstance(t.value, ast.Attribute)
            and t.value.attr == "extra"
        ):
            n += 1
    return n


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    for name, value in figures(root).items():
        print(f"{value:6,}  {name}")
