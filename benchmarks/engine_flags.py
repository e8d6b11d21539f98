"""Read an engine release's command-line flag set from its released Python sources.

    python benchmarks/engine_flags.py vllm ROOT kvlint/engines/vllm/data/flag_sets.json
    python benchmarks/engine_flags.py sglang ROOT kvlint/engines/sglang/data/flag_sets.json
    python benchmarks/engine_flags.py tgi ROOT kvlint/engines/tgi/data/flag_sets.json
    python benchmarks/engine_flags.py lmdeploy ROOT kvlint/engines/lmdeploy/data/flag_sets.json
    python benchmarks/engine_flags.py llamacpp ROOT kvlint/engines/llamacpp/data/flag_sets.json

ROOT holds one folder per release, `vllm-0.10.1/`, `sglang-0.5.9/`: the release's wheel from PyPI unzipped
(python files only; the engine is not installed or imported); for TGI, which is no Python package,
`tgi-3.3.4/launcher/src/main.rs` as the release's tag has it (`git show v3.3.4:launcher/src/main.rs` in a
clone of huggingface/text-generation-inference). The flags are read from the source, never by running the
engine:

- vLLM: every `add_argument("--flag", "-f", ...)` of the parsers `vllm serve` builds: vllm/engine/arg_utils.py
  (EngineArgs, AsyncEngineArgs), the module make_arg_parser is imported from (entrypoints/openai/cli_args.py,
  entrypoints/launchers/cli_args.py, entrypoints/common/cli_args.py) and the `serve` sub-command
  (vllm/entrypoints/cli/serve.py; vllm/scripts.py before 0.8), and the flags `FrontendArgs.add_cli_args`
  makes from its dataclass fields (`f"--{key.replace('_', '-')}"` over `get_kwargs(cls)`, 0.10 on): one per
  annotated field of the class and its bases in that module;
- SGLang: the add_argument calls of ServerArgs.add_cli_args in sglang/srt/server_args.py (the parser
  prepare_server_args builds); a release whose add_cli_args calls add_cli_args_from_dataclass (0.5.14 on)
  is left out.
- TGI: the fields of the launcher's clap `struct Args` (launcher/src/main.rs): a field whose `#[clap(...)]`
  says `long` is `--field-name` (clap's kebab-case of the field; `long = "x"` names it), `short` its first
  letter; clap adds `--help`/`-h` and `--version`/`-V` (the struct's `#[clap(version)]`).
- LMDeploy: the options `lmdeploy serve api_server` adds, from lmdeploy/cli/serve.py and the ArgumentHelper
  methods of lmdeploy/cli/utils.py it calls (benchmarks/lmdeploy_flags.py).
- llama.cpp: the options llama-server keeps from common/arg.cpp of build bNNNN, `llamacpp-NNNN/common/arg.cpp`
  (benchmarks/llamacpp_flags.py).

Rewrites the table's `releases` (every release read, oldest first), `read` (the files read in each) and
`flags` (each flag -> the runs of consecutive releases read that have it, "0.6.0..0.9.2"); the other keys
of the file (engine, table, about) are kept.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys

import argparse_calls
import clap_enums
import engine_choices
import llamacpp_flags
import lmdeploy_flags

SGLANG_FILES = ("sglang/srt/server_args.py",)


def _option_strings(call: ast.Call) -> list[str]:
    names = []
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"):
            names.append(arg.value)
        else:
            break
    return names


def _receiver(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id
    return ""


def _generated(call: ast.Call) -> bool:
    """`add_argument(f"--{key.replace('_', '-')}", **value)`: one flag per dataclass field."""
    return any(isinstance(a, ast.JoinedStr) for a in call.args)


def _fields(tree: ast.Module, name: str, seen: set[str] | None = None) -> list[str]:
    """The annotated fields of class `name` and of its bases defined in the same module."""
    seen = seen if seen is not None else set()
    if name in seen:
        return []
    seen.add(name)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    cls = classes.get(name)
    if cls is None:
        return []
    out: list[str] = []
    for base in cls.bases:
        if isinstance(base, ast.Name):
            out += _fields(tree, base.id, seen)
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if "ClassVar" in ast.unparse(node.annotation) or node.target.id.startswith("_"):
                continue
            out.append(node.target.id)
    return out


def _generating_classes(tree: ast.Module) -> list[str]:
    """Classes whose add_cli_args makes flags from their fields (FrontendArgs, 0.10 on), and those that
    inherit that method in the same module."""
    direct = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        if any(isinstance(c, ast.Call) and _generated(c) for c in ast.walk(cls)):
            direct.append(cls.name)
    return direct


def _used_generators(tree: ast.Module, generating: list[str]) -> list[str]:
    """The classes whose `X.add_cli_args(parser)` make_arg_parser calls (FrontendArgs, not its base)."""
    used = []
    for call in (c for c in ast.walk(tree) if isinstance(c, ast.Call)):
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr == "add_cli_args" and isinstance(f.value, ast.Name):
            used.append(f.value.id)
    return [u for u in used if u in generating or any(g in _bases(tree, u) for g in generating)]


def _bases(tree: ast.Module, name: str) -> list[str]:
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    out: list[str] = []
    todo = [name]
    while todo:
        cls = classes.get(todo.pop())
        if cls is None:
            continue
        for b in cls.bases:
            if isinstance(b, ast.Name):
                out.append(b.id)
                todo.append(b.id)
    return out


def _parse(root: str, rel: str) -> ast.Module | None:
    path = os.path.join(root, rel)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as fh:
        return ast.parse(fh.read())


def _vllm_files(root: str) -> list[str]:
    """arg_utils.py, the serve sub-command and the module its `make_arg_parser` comes from (it moved:
    entrypoints/openai/cli_args.py, entrypoints/launchers/cli_args.py, entrypoints/common/cli_args.py)."""
    files = ["vllm/engine/arg_utils.py"]
    for serve in ("vllm/entrypoints/cli/serve.py", "vllm/scripts.py"):
        tree = _parse(root, serve)
        if tree is None:
            continue
        files.append(serve)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "make_arg_parser" for a in node.names):
                files.append(node.module.replace(".", "/") + ".py")  # type: ignore[union-attr]
        break
    return files


def _server_args(tree: ast.Module) -> ast.AST:
    """SGLang's ServerArgs.add_cli_args: the parser launch_server builds (prepare_server_args)."""
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs"):
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "add_cli_args":
                return fn
    raise SystemExit("ServerArgs.add_cli_args not found")


def _from_dataclass(root: str) -> bool:
    """SGLang's server_args.py calls add_cli_args_from_dataclass (0.5.14 on)."""
    tree = _parse(root, SGLANG_FILES[0])
    return tree is not None and "add_cli_args_from_dataclass" in ast.unparse(tree)


def flags_of(root: str, files: list[str]) -> tuple[set[str], list[str], dict[str, dict]]:
    """The flags the files' parsers add, the files read, and each flag's choices (engine_choices.py)."""
    found: set[str] = set()
    read: list[str] = []
    choices: dict[str, dict] = {}
    source = engine_choices.Source(root)
    for rel in files:
        tree = _parse(root, rel)
        if tree is None:
            continue
        read.append(rel)
        module = rel[:-3].replace("/", ".")
        scope = _server_args(tree) if rel == SGLANG_FILES[0] else tree
        for fn in _functions(scope):
            kwargs = argparse_calls.Kwargs(fn, module)
            reader = engine_choices.Reader(source, module, kwargs.locals)
            for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
                if not (isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"):
                    continue
                if rel == "vllm/scripts.py" and _receiver(call) != "serve_parser":
                    continue  # the `vllm` command's own options and its other sub-commands
                names = _option_strings(call)
                found.update(names)
                entry = argparse_calls.call_choices(reader, call, kwargs) if names else None
                if entry is not None:
                    choices.update(dict.fromkeys(names, entry))
        generating = _generating_classes(tree)
        for cls in _used_generators(tree, generating):
            for f in _fields(tree, cls):
                flag = "--" + f.replace("_", "-")
                found.add(flag)
                entry = _generated_choices(source, module, tree, cls, f)
                if entry is not None:
                    choices[flag] = entry
    return found, read, choices


def _functions(scope: ast.AST) -> list[ast.AST]:
    """The scopes get_kwargs names are bound in: `scope` itself when it is a function, else each
    outermost function (a method counts) and the module's loose statements."""
    if isinstance(scope, ast.FunctionDef):
        return [scope]
    return _outermost(
        scope, [n for n in ast.walk(scope) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    )


def _outermost(scope: ast.AST, functions: list[ast.AST]) -> list[ast.AST]:
    """Top-level statements' functions (nested ones walked with their parent), and a module body's own
    add_argument calls as one more scope."""
    nested = {id(n) for f in functions for n in ast.walk(f) if n is not f}
    tops = [f for f in functions if id(f) not in nested]
    loose = ast.Module(
        body=[n for n in getattr(scope, "body", []) if not isinstance(n, ast.FunctionDef | ast.ClassDef)],
        type_ignores=[],
    )
    return [*tops, loose]


def _generated_choices(source, module: str, tree: ast.Module, cls: str, field: str) -> dict | None:
    """The choices of a flag FrontendArgs makes from a field, after add_cli_args' own changes."""
    reader = engine_choices.Reader(source, module)
    for kwargs in _add_cli_args_kwargs(tree, module):
        for owner, (_m, name) in kwargs.classes.items():
            if name in (cls, "cls"):
                return kwargs.field(reader, owner, field, cls)
    return argparse_calls.field_choices(source, module, cls, field)


_KWARGS: list[tuple[ast.Module, list]] = []  # the last module's


def _add_cli_args_kwargs(tree: ast.Module, module: str) -> list:
    """The get_kwargs names of each add_cli_args in the module, read once a module."""
    if not _KWARGS or _KWARGS[0][0] is not tree:
        found = [
            argparse_calls.Kwargs(fn, module)
            for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef) and fn.name == "add_cli_args"
        ]
        _KWARGS[:] = [(tree, found)]
    return _KWARGS[0][1]


_RUST_FIELD = re.compile(r"^\s*(?:pub\s+)?([a-z_][a-z0-9_]*)\s*:", re.MULTILINE)
_ATTR = re.compile(r"#\[(?:clap|arg)\((.*?)\)\]", re.DOTALL)


def tgi_flags(root: str) -> tuple[set[str], list[str], dict[str, dict]]:
    """The long and short flags of TGI's launcher `struct Args` (clap derive)."""
    rel = "launcher/src/main.rs"
    path = os.path.join(root, rel)
    if not os.path.exists(path):
        return set(), [], {}
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    start = text.find("struct Args {")
    if start < 0:
        return set(), [], {}
    body = text[start : text.find("\n}", start)]
    found = {"--help", "-h", "--version", "-V"}
    pending: list[str] = []
    for line in body.splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("//") or not stripped:
            continue
        if stripped.startswith("#["):
            pending += [m.group(1) for m in _ATTR.finditer(stripped)]
            continue
        field = _RUST_FIELD.match(line)
        if field is None:
            continue
        name, attrs = field.group(1), ", ".join(pending)
        pending = []
        words = {w.strip().split("=")[0].strip(): w for w in attrs.split(",")}
        if "long" in words:
            explicit = re.search(r'long\s*=\s*"([^"]+)"', attrs)
            found.add("--" + (explicit.group(1) if explicit else name.replace("_", "-")))
        if "short" in words:
            explicit = re.search(r"short\s*=\s*'(.)'", attrs)
            found.add("-" + (explicit.group(1) if explicit else name[0]))
    return found, [rel], clap_enums.enum_options(text)


def table(engine: str, root: str) -> dict:
    """The engine's flag table over every release unzipped under `root` (`<engine>-<release>/`): each flag
    with the runs of consecutive releases read that have it."""
    releases = sorted(
        (d[len(engine) + 1 :] for d in os.listdir(root) if d.startswith(engine + "-")), key=_key
    )
    sets: dict[str, set[str]] = {}
    read: dict[str, str] = {}
    per_release: dict[str, dict[str, dict]] = {}
    for release in releases:
        where = os.path.join(root, f"{engine}-{release}")
        if engine == "sglang" and _from_dataclass(where):
            continue  # 0.5.14 on: flags made from dataclass fields in sglang/srt/arg_groups/, not read here
        if engine == "tgi":
            flags, used, found_choices = tgi_flags(where)
        elif engine == "lmdeploy":
            flags, used, found_choices = lmdeploy_flags.lmdeploy_flags(where)
        elif engine == "llamacpp":
            flags, used, found_choices = llamacpp_flags.llamacpp_flags(where)
        else:
            flags, used, found_choices = flags_of(
                where, _vllm_files(where) if engine == "vllm" else list(SGLANG_FILES)
            )
        if not flags:
            continue
        sets[release] = flags
        per_release[release] = found_choices
        read[release] = " ".join(f"{engine}=={release}:{f}" for f in used)
    order = list(sets)
    return {
        "releases": order,
        "read": read,
        "flags": flag_runs(order, sets),
        "choices": choice_runs(order, per_release),
    }


def flag_runs(order: list[str], sets: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each flag of any release in `order` -> the runs of consecutive releases that have it ("0.6.0..0.6.6")."""
    spans: dict[str, list[str]] = {}
    for flag in sorted(set().union(*sets.values())):
        runs: list[list[str]] = []
        for i, release in enumerate(order):
            if flag not in sets[release]:
                continue
            if runs and order.index(runs[-1][-1]) == i - 1:
                runs[-1][-1] = release
            else:
                runs.append([release, release])
        spans[flag] = [a if a == b else f"{a}..{b}" for a, b in runs]
    return spans


def choice_runs(order: list[str], per_release: dict[str, dict[str, dict]]) -> dict[str, list[dict]]:
    """Each flag's choices as runs of consecutive releases read with the same entry: {"releases":
    "0.6.0..0.6.6", "type": "str", "values": [...]} (or "unjudged": the expression as written)."""
    out: dict[str, list[dict]] = {}
    for flag in sorted({f for c in per_release.values() for f in c}):
        runs: list[tuple[int, int, str]] = []
        for i, release in enumerate(order):
            entry = per_release[release].get(flag)
            if entry is None:
                continue
            key = json.dumps(entry, sort_keys=True)
            if runs and runs[-1][1] == i - 1 and runs[-1][2] == key:
                runs[-1] = (runs[-1][0], i, key)
            else:
                runs.append((i, i, key))
        out[flag] = [
            {"releases": order[a] if a == b else f"{order[a]}..{order[b]}", **json.loads(k)}
            for a, b, k in runs
        ]
    return out


def main(argv: list[str]) -> int:
    engine, root, out = argv
    with open(out, encoding="utf-8") as fh:
        doc = json.load(fh)
    doc.update(table(engine, root))
    choices = doc.pop("choices")
    text = json.dumps(doc, indent=1)
    # the choices one run a line: a value list each, not a value a line
    runs = ",\n".join(
        f"  {json.dumps(flag)}: [\n" + ",\n".join(f"   {json.dumps(r)}" for r in rs) + "\n  ]"
        for flag, rs in choices.items()
    )
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text[: -len("\n}")] + ',\n "choices": {\n' + runs + "\n }\n}\n")
    return 0


def _key(release: str) -> tuple[int, ...]:
    """'0.8.5.post1' -> (0, 8, 5, 1): releases in PyPI's order; 'b4729' -> (4729,): llama.cpp's builds."""
    return tuple(int(p) for p in release.lstrip("b").replace(".post", ".").split(".") if p.isdigit())


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
