"""The house figures of code-review-3 (issue 22), measured from the source with the AST.

    python benchmarks/house_figures.py [--list] [ROOT]

Prints, for the package under ROOT (default: this checkout):
- engine-name comparisons outside the engine packages: a string naming an engine compared with ==, !=,
  in, not in, or used as a dict-literal key. The names are the registry's (the keys of ENGINES in ROOT's
  kvlint/engines/__init__.py, read from its source, so a checkout's own engines count) and `ollama`,
  which the llama.cpp package reads; a checkout without the registry counts vllm, sglang and tgi;
- imports of an engine package's modules from outside the engine packages: a package is a folder under
  kvlint/engines/ (its modules are that engine's); the modules at kvlint/engines/*.py (the registry,
  the protocol, the shared fact and flag-table readers) are the engines layer's API, imported freely;
- writes onto a Deployment after extract: assignments to a Deployment field or its `extra` dict
  outside kvlint/extract/, kvlint/load/ and an engine package's launch readers (attribute names
  matched against the record's fields);
- distinct string keys used on an `extra` dict (subscript, get, in, setdefault, pop);
- calls into the GPU catalog (kvlint.catalog.gpus, .mig, .dra_devices) from kvlint/extract/ and
  kvlint/link/: the review's "GPU looked up once, in resolve" counts these down to the ones that choose
  among cards by their memory;
- functions over cyclomatic complexity 25 (radon, when installed).
These are proxies, counted the same way before and after a change; the review counted by hand.
`--list` also prints `file:line what` for each engine-name comparison, engine-package import and GPU-catalog
call from extract/ or link/.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

# a checkout from before the registry: the three engines it modelled
FIRST_ENGINES = frozenset({"vllm", "sglang", "tgi"})
# words that name an engine without being a registry key (Ollama runs llama.cpp's runner)
ALSO_NAMES = frozenset({"ollama"})
# where engine modules live: the packages, and the two stage folders that held them before
ENGINE_DIRS = ("kvlint/engines/", "kvlint/capacity/engines/", "kvlint/extract/engine_args/")
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
    "triton.py",  # Triton's config.pbtxt parameters (kvlint/engines/trtllm/triton.py)
    "repository.py",  # Triton's model repository (kvlint/engines/trtllm/repository.py)
    "engine_config.py",  # a built TensorRT-LLM engine's config.json
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


def engine_names(root: Path) -> frozenset[str]:
    """The registry's engine names in ROOT's source (the keys of `ENGINES = {...}`), and ALSO_NAMES."""
    registry = root / "kvlint" / "engines" / "__init__.py"
    if registry.is_file():
        for node in ast.walk(ast.parse(registry.read_text(encoding="utf-8"))):
            if (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id == "ENGINES" for t in _targets(node))
                and isinstance(node.value, ast.Dict)
            ):
                keys = {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
                return frozenset(keys) | ALSO_NAMES
    return FIRST_ENGINES


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def engine_packages(root: Path) -> frozenset[str]:
    """The engine packages: the folders under kvlint/engines/ (each one engine's modules)."""
    top = root / "kvlint" / "engines"
    return (
        frozenset(p.name for p in top.iterdir() if (p / "__init__.py").is_file())
        if top.is_dir()
        else frozenset()
    )


def _named(node: ast.AST, names: frozenset[str]) -> list[str]:
    """The engine names an operand spells: a string constant, or one inside a tuple / list / set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for e in node.elts for n in _named(e, names)]
    return []


def _engine_module(name: str, names: frozenset[str], packages: frozenset[str]) -> bool:
    parts = name.split(".")
    if len(parts) > 2 and parts[:2] == ["kvlint", "engines"]:
        return parts[2] in packages
    return name.startswith(("kvlint.capacity.engines.", "kvlint.extract.engine_args.")) and any(
        e in parts[3] for e in names
    )


def _dispatch(node: ast.AST, names: frozenset[str], packages: frozenset[str]) -> str | None:
    """What an engine-name comparison or engine-package import at this node does, or None."""
    if isinstance(node, ast.Compare):
        found = [n for op in (node.left, *node.comparators) for n in _named(op, names)]
        return f"compares with {', '.join(map(repr, found))}" if found else None
    if isinstance(node, ast.Dict):
        found = [n for k in node.keys if k is not None for n in _named(k, names)]
        return f"dict keyed by {', '.join(map(repr, found))}" if found else None
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        hit = [m for m in mods if _engine_module(m, names, packages)]
        return f"imports {hit[0]}" if hit else None
    if isinstance(node, ast.Import):
        hit = [a.name for a in node.names if _engine_module(a.name, names, packages)]
        return f"imports {hit[0]}" if hit else None
    return None


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


def figures(root: Path, listed: list[str] | None = None) -> dict[str, int]:
    """The figures; `listed` (when given) gets `file:line what` of each comparison and import counted."""
    trees = _modules(root)
    fields = _deployment_fields(trees)
    names, packages = engine_names(root), engine_packages(root)
    comparisons = imports = writes = gpu_calls = 0
    files_comparing: set[str] = set()
    keys: set[str] = set()
    for rel, tree in trees.items():
        if rel.startswith(BEFORE_RESOLVE):
            calls = gpu_catalog_calls(rel, tree)
            gpu_calls += len(calls)
            if listed is not None:
                listed.extend(calls)
        in_engine = rel.startswith(ENGINE_DIRS)
        reader = rel.startswith("kvlint/engines/") and rel.rsplit("/", 1)[-1] in ENGINE_READERS
        after_extract = (not rel.startswith(EXTRACT_DIRS) and not in_engine) or (
            rel.startswith(("kvlint/capacity/engines/", "kvlint/engines/")) and not reader
        )
        for node in ast.walk(tree):
            key = _extra_key(node)
            if key:
                keys.add(key)
            if isinstance(node, (ast.Assign, ast.AugAssign)) and after_extract:
                writes += _writes(node, fields)
            what = None if in_engine else _dispatch(node, names, packages)
            if what is None:
                continue
            if what.startswith("imports"):
                imports += 1
            else:
                comparisons += 1
                files_comparing.add(rel)
            if listed is not None:
                listed.append(f"{rel}:{getattr(node, 'lineno', 0)} {what}")
    out = {
        "engine-name comparisons outside the engine packages": comparisons,
        "files with such comparisons": len(files_comparing),
        "engine-module imports from outside the engine packages": imports,
        "Deployment writes after extract (fields and extra)": writes,
        "distinct extra keys": len(keys),
        "GPU-catalog calls in extract/ and link/": gpu_calls,
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


GPU_CATALOG = ("kvlint.catalog.gpus", "kvlint.catalog.mig", "kvlint.catalog.dra_devices")
BEFORE_RESOLVE = ("kvlint/extract/", "kvlint/link/")


def gpu_catalog_calls(rel: str, tree: ast.Module) -> list[str]:
    """`file:line calls NAME` for each call into the GPU catalog in a module (names bound by its imports,
    wherever in the module they are made)."""
    modules: set[str] = set()
    functions: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if f"{node.module}.{a.name}" in GPU_CATALOG:
                    modules.add(a.asname or a.name)
                elif node.module in GPU_CATALOG:
                    functions.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules.update(a.asname for a in node.names if a.name in GPU_CATALOG and a.asname)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in modules:
            out.append(f"{rel}:{node.lineno} calls {f.value.id}.{f.attr}")
        elif isinstance(f, ast.Name) and f.id in functions:
            out.append(f"{rel}:{node.lineno} calls {f.id}")
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


def main(argv: list[str]) -> None:
    listing = "--list" in argv
    args = [a for a in argv if a != "--list"]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    listed: list[str] = []
    for name, value in figures(root, listed if listing else None).items():
        print(f"{value:6,}  {name}")
    for line in sorted(listed, key=lambda item: (item.split(":")[0], int(item.split(":")[1].split(" ")[0]))):
        print(f"  {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
