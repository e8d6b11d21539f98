"""Engine knowledge stays in kvlint/engines/: outside it no module imports an engine's package, and no
code dispatches on an engine's name (a name compared with ==, !=, in or not in, or used as a dict key).
Everything else asks the registry and the protocol (kvlint/engines/__init__.py, base.py).

The names are every name in the registry, and `ollama` (the llama.cpp package reads Ollama). An engine
package is a folder under kvlint/engines/; the modules at kvlint/engines/*.py (the registry, the protocol,
the shared fact and flag-table readers, which take an engine's name and read its package's data) are the
engines layer's API and may be imported from anywhere above it. benchmarks/house_figures.py counts by the
same rule.

An input kind's own vocabulary can spell an engine's name (KubeAI's `engine: VLLM`, llm-d's container
`vllm`): the engine package declares those words (`Engine.goes_by`) and the input kind asks
`engines.called` / `engines.named_in`."""

from __future__ import annotations

import ast

from conftest import ROOT

from kvlint import engines

PACKAGE = ROOT / "kvlint"
ENGINE_DIR = PACKAGE / "engines"
NAMES = frozenset(engines.names()) | {"ollama"}
PACKAGES = frozenset(p.name for p in ENGINE_DIR.iterdir() if (p / "__init__.py").is_file())


def _names_in(node: ast.AST) -> list[str]:
    """Engine names a comparison operand spells: a string constant, or one inside a tuple / list / set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [name for elt in node.elts for name in _names_in(elt)]
    return []


def _engine_package(module: str) -> bool:
    parts = module.split(".")
    return len(parts) >= 3 and parts[:2] == ["kvlint", "engines"] and parts[2] in PACKAGES


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
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ENGINE_DIR in path.parents:
            continue
        found += violations(path.read_text(), path.relative_to(ROOT).as_posix())
    assert not found, "ask kvlint.engines (the registry and the Engine protocol):\n" + "\n".join(found)


def _kinds_asked() -> set[str]:
    """The input kinds a module outside kvlint/engines/ asks `engines.called` / `engines.named_in` about."""
    asked = set()
    for path in PACKAGE.rglob("*.py"):
        if ENGINE_DIR in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"called", "named_in"}
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "engines"
            ):
                kind = node.args[0]
                assert isinstance(kind, ast.Constant), (
                    f"{path}:{node.lineno} names its input kind in a constant"
                )
                asked.add(kind.value)
    return asked


def test_every_input_word_an_engine_declares_is_asked_by_its_input_kind():
    """A word an engine package says an input kind names it by is read there (a kind spelled differently
    on the two sides would never match), and every kind an input reader asks about has a word."""
    declared = {kind for e in engines.every() for kind in [*e.goes_by, *e.unread_in]}
    assert declared == _kinds_asked()
    for e in engines.every():
        assert set(e.unread_in) <= set(e.goes_by), e.name
        assert all(w == w.lower() for words in e.goes_by.values() for w in words), e.name


def test_an_input_word_names_its_engine():
    """KubeAI's `engine: VLLM` is vLLM, its `OLlama` the llama.cpp package (which reads Ollama, as KubeAI runs
    it); a word no engine declares names none."""
    assert engines.called("kubeai", "VLLM").name == "vllm"
    ollama = engines.called("kubeai", "OLlama")
    assert ollama.name == "llamacpp" and "kubeai" not in ollama.unread_in
    assert engines.called("kubeai", "infinity") is None
    assert engines.named_in("kserve runtime", "kserve-vllm-runtime").name == "vllm"
    assert engines.named_in("kserve runtime", "kserve-huggingfaceserver") is None


def test_the_checker_catches_each_kind_of_dispatch():
    """The checker itself: every form it forbids is found in a snippet that has it, none in one that does not."""
    bad = """
from kvlint.engines.vllm import options
import kvlint.engines.tgi.plan
from kvlint.engines import sglang
from kvlint.engines.llamacpp.plan import settings
if d.engine_name == "tgi": pass
if engine in ("vllm", "sglang"): pass
if "sglang" not in image: pass
if backend == "ollama": pass
TABLE = {"vllm": 1}
"""
    found = violations(bad)
    assert [f.split(" ", 1)[1] for f in found] == [
        "imports kvlint.engines.vllm",
        "imports kvlint.engines.tgi.plan",
        "imports kvlint.engines.sglang",
        "imports kvlint.engines.llamacpp.plan",
        "compares with 'tgi'",
        "compares with 'vllm'",
        "compares with 'sglang'",
        "compares with 'sglang'",
        "compares with 'ollama'",
        "dict key 'vllm'",
    ]
    good = """
from kvlint import engines
from kvlint.engines.base import Startup
from kvlint.engines import facts, flag_sets
e = engines.get(d.engine_name)
if e.kv_heads is KvHeadSharding.SHARDED: pass
d.engine = stated("vllm", where, "KubeAI engine VLLM")
"""
    assert violations(good) == []


def test_the_house_figures_count_by_the_same_rule(tmp_path):
    """benchmarks/house_figures.py reports the same places as this test, on a package holding each kind of
    dispatch and each kind of import it allows (the registry's names read from that package's source)."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import house_figures as hf

    (tmp_path / "kvlint" / "engines" / "vllm").mkdir(parents=True)
    (tmp_path / "kvlint" / "engines" / "vllm" / "__init__.py").write_text("")
    (tmp_path / "kvlint" / "engines" / "__init__.py").write_text((ENGINE_DIR / "__init__.py").read_text())
    snippet = """from kvlint.engines.vllm import options
from kvlint.engines import facts, flag_sets
from kvlint import engines
if name == "llamacpp" or backend in ("tgi", "x"): pass
if word == "ollama": pass
TABLE = {"sglang": 1}
e = engines.called("kubeai", word)
"""
    (tmp_path / "kvlint" / "reader.py").write_text(snippet)
    listed: list[str] = []
    figures = hf.figures(tmp_path, listed)
    ours = violations(snippet, "kvlint/reader.py")
    assert sorted({line.split(" ")[0] for line in listed}) == sorted({v.split(" ")[0] for v in ours})
    assert figures["engine-module imports from outside the engine packages"] == 1
    assert figures["engine-name comparisons outside the engine packages"] == 4  # two on one line
