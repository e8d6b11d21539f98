"""The options of `lmdeploy serve api_server` in one LMDeploy release, read from its python files with `ast`.

Called by benchmarks/engine_flags.py for each `lmdeploy-<release>/` folder: lmdeploy/cli/serve.py and
lmdeploy/cli/utils.py as the release has them (the wheel from PyPI unzipped, or `git show
v<release>:lmdeploy/cli/serve.py` in a clone of InternLM/lmdeploy; the two were compared at 0.16.0 and are
the same). `SubCliServe.add_parser_api_server` builds the parser: its own `parser.add_argument("--x", ...)`
calls, and each `ArgumentHelper.<name>(group)` it calls, a static method of lmdeploy/cli/utils.py whose
add_argument calls (and the ArgumentHelper methods it calls in turn) add the options. argparse adds
`-h/--help` to every sub-parser. A helper's `choices=choices` parameter is read from the call's keyword,
else the parameter's default. LMDeploy is never installed or imported.
"""

from __future__ import annotations

import ast
import json
import os
import sys

import argparse_calls
import engine_choices

SERVE = "lmdeploy/cli/serve.py"
UTILS = "lmdeploy/cli/utils.py"


def _methods(tree: ast.Module, cls: str) -> dict[str, ast.FunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    return {}


def _strings(call: ast.Call) -> list[str]:
    out = []
    for arg in call.args:
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-")):
            break
        out.append(arg.value)
    return out


def _bindings(helper: ast.FunctionDef, call: ast.Call | None) -> dict[str, ast.AST]:
    """A helper's parameters bound to the call's keywords, else their defaults (`choices=[...]`)."""
    params = helper.args.args
    named = [p.arg for p in params[len(params) - len(helper.args.defaults) :]]
    defaults = dict(zip(named, helper.args.defaults, strict=True))
    if call is not None:
        defaults.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    return defaults


def _helper_name(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "ArgumentHelper":
        return f.attr
    return ""


class _Walk:
    """The add_argument calls reached from add_parser_api_server, with the choices of each."""

    def __init__(self, source: engine_choices.Source, helpers: dict[str, ast.FunctionDef]) -> None:
        self.helpers = helpers
        self.source = source
        self.found: set[str] = {"--help", "-h"}
        self.kinds: dict[str, str] = {
            "--help": "bool",
            "-h": "bool",
        }  # option -> "bool" (takes no value) or "value"
        self.choices: dict[str, dict] = {}
        self.missing: list[str] = []

    def scope(self, fn: ast.FunctionDef, module: str, local: dict[str, ast.AST], depth: int = 0) -> None:
        kwargs = argparse_calls.Kwargs(fn, module)
        reader = engine_choices.Reader(self.source, module, {**kwargs.locals, **local})
        for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
            name = _helper_name(call)
            if name and depth < 4:
                helper = self.helpers.get(name)
                if helper is None:
                    self.missing.append(name)
                    continue
                self.scope(helper, "lmdeploy.cli.utils", _bindings(helper, call), depth + 1)
            elif isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument":
                names = _strings(call)
                self.found.update(names)
                action = argparse_calls._keyword(call, "action")
                taken = isinstance(action, ast.Constant) and str(action.value).startswith(
                    ("store_t", "store_f")
                )
                self.kinds.update(dict.fromkeys(names, "bool" if taken else "value"))
                entry = argparse_calls.call_choices(reader, call, kwargs) if names else None
                if entry is not None:
                    self.choices.update(dict.fromkeys(names, entry))


def lmdeploy_flags(root: str) -> tuple[set[str], list[str], dict[str, dict]]:
    """The options of the release's api_server parser, the files read, and the choices of each option."""
    walk = _walk(root)
    return (walk.found, [SERVE, UTILS], walk.choices) if walk is not None else (set(), [], {})


def _walk(root: str) -> _Walk | None:
    source = engine_choices.Source(root)
    serve, utils = source.tree("lmdeploy.cli.serve"), source.tree("lmdeploy.cli.utils")
    if serve is None or utils is None:
        return None
    fn = _methods(serve, "SubCliServe").get("add_parser_api_server")
    if fn is None:
        return None
    walk = _Walk(source, _methods(utils, "ArgumentHelper"))
    walk.scope(fn, "lmdeploy.cli.serve", {})
    if walk.missing:
        raise SystemExit(f"{root}: ArgumentHelper has no {', '.join(sorted(set(walk.missing)))}")
    return walk


def main(argv: list[str]) -> int:
    """`python benchmarks/lmdeploy_flags.py ROOT kvlint/engines/lmdeploy/data/options.json`: rewrites the
    option table's `options` as every option of the releases under ROOT, each "bool" (store_true) or
    "value" (the newest release's kind)."""
    root, out = argv
    with open(out, encoding="utf-8") as fh:
        doc = json.load(fh)
    kinds: dict[str, str] = {}
    for release in sorted(os.listdir(root), key=lambda d: release_key(d.split("-", 1)[1])):
        walk = _walk(os.path.join(root, release))
        kinds.update(walk.kinds if walk is not None else {})
    doc["options"] = dict(sorted(kinds.items()))
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return 0


def release_key(release: str) -> tuple[int, ...]:
    """'0.9.2.post1' -> (0, 9, 2, 1): releases in PyPI's order."""
    return tuple(int(p) for p in release.replace(".post", ".").split(".") if p.isdigit())


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
