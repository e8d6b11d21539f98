"""Engine knowledge stays in kvlint/engines/: outside it no module imports an engine's package, and no
code dispatches on an engine's name (a name compared with ==, !=, in or not in, or used as a dict key).
Everything else asks the registry and the protocol (kvlint/engines/__init__.py, base.py).

An input kind's own vocabulary can spell a word that happens to be an engine's name: a chart's subchart
or container called `vllm`, a stack's backend names. Those are facts of the input, not a choice between
engines; each is listed in INPUT_WORDS with what it is, and an entry nothing matches any more fails."""

from __future__ import annotations

import ast

from conftest import ROOT

from kvlint import engines

PACKAGE = ROOT / "kvlint"
ENGINE_DIR = PACKAGE / "engines"
NAMES = frozenset(engines.names())

# (file, word) -> what the input calls by that word
INPUT_WORDS = {
    (
        "kvlint/extract/charts/chart_layouts.py",
        "vllm",
    ): "OPEA's umbrella chart holds its vLLM subchart's values under `vllm:`",
    (
        "kvlint/extract/pod/engine_args/hfserver.py",
        "vllm",
    ): "KServe's Hugging Face server's `--backend vllm` value",
    ("kvlint/extract/kinds/kserve.py", "vllm"): "KServe runtime and model-format names that carry `vllm`",
    ("kvlint/extract/kinds/kubeai.py", "vllm"): "KubeAI's Model `engine: VLLM` (read lower-cased)",
    ("kvlint/extract/kinds/llmaz.py", "vllm"): "llmaz's stock BackendRuntime names",
    ("kvlint/extract/kinds/llmaz.py", "sglang"): "llmaz's stock BackendRuntime names",
    ("kvlint/extract/kinds/llmaz.py", "tgi"): "llmaz's stock BackendRuntime names",
    ("kvlint/extract/kinds/llmaz.py", "llamacpp"): "llmaz's stock BackendRuntime names",
    ("kvlint/extract/kinds/llmd_values.py", "vllm"): "the llm-d chart's engine container is named `vllm`",
}


def _names_in(node: ast.AST) -> list[str]:
    """Engine names a comparison operand spells: a string constant, or one inside a tuple / list / set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [name for elt in node.elts for name in _names_in(elt)]
    return []


def _engine_package(module: str) -> bool:
    parts = module.split(".")
    return len(parts) >= 3 and parts[:2] == ["kvlint", "engines"] and parts[2] in NAMES


def violations(source: str, filename: str = "<snippet>") -> list[str]:
    """`file:line what` for each engine-name dispatch and engine-package import in the source."""
    out = []
    for node in ast.walk(ast.parse(source, filename)):
        found: list[str] = []
        if isinstance(node, ast.Compare):
            found = [f"compares with {n!r}" for op in (node.left, *node.comparators) for n in _names_in(op)]
        elif isinstance(node, ast.Dict):
            found = [f"dict key {n!r}" for key in node.keys if key is not None for n in _names_in(key)]
        elif isinstance(node, ast.Import):
            found = [f"imports {a.name}" for a in node.names if _engine_package(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found = [f"imports {t}" for t in targets if _engine_package(t)][:1]
        out += [f"{filename}:{getattr(node, 'lineno', 0)} {what}" for what in found]
    return out


def test_nothing_outside_the_engine_packages_dispatches_on_an_engine():
    found, seen = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if ENGINE_DIR in path.parents:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for v in violations(path.read_text(), rel):
            word = v.rsplit("'", 2)[-2] if v.endswith("'") else ""
            if (rel, word) in INPUT_WORDS:
                seen.add((rel, word))
            else:
                found.append(v)
    assert not found, "ask kvlint.engines (the registry and the Engine protocol):\n" + "\n".join(found)
    assert seen == set(INPUT_WORDS), f"INPUT_WORDS entries nothing spells any more: {set(INPUT_WORDS) - seen}"


def test_the_checker_catches_each_kind_of_dispatch():
    """The checker itself: every form it forbids is found in a snippet that has it, none in one that does not."""
    bad = """
from kvlint.engines.vllm import options
import kvlint.engines.tgi.plan
from kvlint.engines import sglang
if d.engine_name == "tgi": pass
if engine in ("vllm", "sglang"): pass
if "sglang" not in image: pass
TABLE = {"vllm": 1}
"""
    found = violations(bad)
    assert [f.split(" ", 1)[1] for f in found] == [
        "imports kvlint.engines.vllm",
        "imports kvlint.engines.tgi.plan",
        "imports kvlint.engines.sglang",
        "compares with 'tgi'",
        "compares with 'vllm'",
        "compares with 'sglang'",
        "compares with 'sglang'",
        "dict key 'vllm'",
    ]
    good = """
from kvlint import engines
from kvlint.engines.base import Startup
e = engines.get(d.engine_name)
if e.kv_heads is KvHeadSharding.SHARDED: pass
d.engine = stated("vllm", where, "KubeAI engine VLLM")
"""
    assert violations(good) == []
