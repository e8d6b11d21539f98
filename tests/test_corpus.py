"""kvlint against the real, public files in ../shared/corpus/manifests and manifests2 (read in place).

tests/data/corpus_expected.yaml holds facts a person read from the first folder's 103 files (not
kvlint's output): every serving workload with its engine, model, GPU, counts, parallelism and limits,
and the documents that serve no model. The tests hold kvlint's extraction against that table.

tests/data/corpus_findings.yaml covers every file of both folders: the workloads kvlint recognises and
its findings (code, line, severity), each warning and error with a hand-checked `why`. A finding that
appears, disappears or moves, or a workload no longer recognised, fails the test; re-check the file and
rewrite its entry with `python tests/corpus_expect.py --update FILE` (which keeps the notes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml_free_loader
from conftest import ROOT, SHARED, shared, shared_params

from kvlint.catalog.gpus import label_gpu, lookup
from kvlint.extract.pod.gpu_selectors import kubeai_profile
from kvlint.load import load_bytes
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings
from kvlint.units import parse_count

EXPECTED = yaml_free_loader.load(ROOT / "tests" / "data" / "corpus_expected.yaml")["files"]
MODELLED = {"vllm", "sglang", "tgi", "llamacpp", "ray-serve-llm"}
FIELDS = [
    ("tensor_parallel", "tensor_parallel"),
    ("pipeline_parallel", "pipeline_parallel"),
    ("max_model_len", "max_context"),
    ("max_num_seqs", "max_sequences"),
    ("gpu_memory_utilization", "gpu_memory_utilization"),
    ("dtype", "dtype"),
    ("quantization", "quantization"),
    ("kv_cache_dtype", "kv_cache_dtype"),
    ("max_num_batched_tokens", "max_batched_tokens"),
    ("gpus_per_pod", "gpus_per_pod"),
    ("pods_per_replica", "pods"),
]


def corpus() -> Path:
    return shared("corpus", "manifests")


def lint(name: str):
    result = read_and_lint(str(corpus() / name), Settings(), name)
    assert not isinstance(result, str), result
    return result


def all_files() -> list[str]:
    folder = SHARED / "corpus" / "manifests"
    return sorted(p.name for p in folder.glob("*.y*ml")) if folder.is_dir() else []


@pytest.mark.parametrize("name", shared_params(("corpus", "manifests"), all_files()))
def test_every_file_lints_with_located_findings(name):
    lines = (corpus() / name).read_text(encoding="utf-8", errors="replace").splitlines()
    result = lint(name)
    for f in result.findings:
        assert 1 <= f.where.line <= max(1, len(lines)), f
        assert f.where.column >= 1 and f.message


def test_the_table_covers_the_whole_corpus():
    names = {p.name for p in corpus().glob("*.y*ml")} - {"INDEX.yaml"}
    assert set(EXPECTED) == names
    assert sum(len(v.get("workloads") or []) for v in EXPECTED.values()) >= 100


def _broken() -> list[str]:
    return sorted(n for n, v in EXPECTED.items() if not v["parses"])


@pytest.mark.parametrize("name", shared_params(("corpus", "manifests"), _broken()))
def test_broken_yaml_gives_a_located_kv001(name):
    result = lint(name)
    kv001 = [f for f in result.findings if f.rule == "KV001"]
    if not kv001:
        # PyYAML's pure-Python scanner rejects a tab after a value; libyaml (and Kubernetes' reader)
        # accept it. Such a file must then lint cleanly as YAML, not fail silently.
        assert "\t" in (corpus() / name).read_text(), f"{name}: no KV001 and no tab to explain it"
        return
    for f in kv001:
        assert f.where.line > 1 or "marker" in f.message, f


def _workloads():
    out = []
    for name, info in sorted(EXPECTED.items()):
        if info["parses"]:
            for w in info.get("workloads") or []:
                out.append((name, w))
    return out


def _find(result, w):
    deps = [r.deployment for r in result.deployments]
    hits = [d for d in deps if d.model and w["line"] and d.model.where and d.model.where.line == w["line"]]
    hits = hits or [d for d in deps if d.model and w["model"] and str(d.model.value) == str(w["model"])]
    if not hits:
        kind, _, rest = w["object"].partition("/")
        if not rest:
            kind, _, rest = w["object"].partition(":")
        hits = [d for d in deps if d.kind == kind and rest in d.name]
    return hits[0] if hits else None


WORKLOADS = _workloads()


@pytest.mark.parametrize(
    ("name", "w"),
    shared_params(
        ("corpus", "manifests"), WORKLOADS, ids=lambda nw: f"{nw[0][:60]}:{nw[1]['object']}", width=2
    ),
)
def test_workload_recognised_with_the_facts_the_file_states(name, w):
    result = lint(name)
    d = _find(result, w)
    assert d is not None, f"{w['object']} ({w['engine']}, {w['model']}) not recognised"
    engine = {"ray-serve-llm": "vllm"}.get(w["engine"], w["engine"])
    assert d.engine_name == engine
    if w["model"] is not None:
        assert d.model is not None and str(d.model.value) == str(w["model"])
    if w["accelerator"] in ("tpu", "neuron", "cpu"):
        assert d.accelerator == w["accelerator"] or "unsupported" in d.extra
    if w["engine"] == "nim" and "nim_release" in d.extra:
        return  # a NIM under its image's published profiles: settled with the GPU (tests/test_nim_profiles.py)
    planned_as_vllm = w["engine"] == "nim" and "nim_generic" in d.extra  # the multi-LLM NIM (nim/generic.py)
    if w["engine"] not in MODELLED and not planned_as_vllm:
        assert "unsupported" in d.extra, "an engine kvlint does not model must be reported as such (KV004)"
        assert any(f.rule == "KV004" for f in result.findings)
        return
    for key, attr in FIELDS:
        want = w.get(key)
        value = getattr(d, attr)
        got = None if value is None else value.value
        if attr == "gpu_memory_utilization" and got is None:
            extra = d.extra.get("mem_fraction_static") or d.extra.get("cuda_memory_fraction")
            got = extra.value if extra is not None else None
        if key == "pods_per_replica":
            want, got = want or 1, got or 1
        if want is None:
            continue
        if key == "max_model_len" and isinstance(want, str):
            want = parse_count(want).value
        assert (
            got is not None and float(got) == float(want)
            if isinstance(want, (int, float))
            else str(got) == str(want)
        ), f"{key}: file says {want!r}, kvlint read {got!r}"
    label, key = w.get("gpu_label"), w.get("gpu_label_key")
    if label:
        want = kubeai_profile(label)[0] if key == "resourceProfile" else label_gpu(key or "", label)
        if want is not None:
            got = lookup(str(d.gpu.value)) if d.gpu is not None else None
            assert got is not None and got.id == want.id, (
                f"GPU: file selects {label} ({want.id}), kvlint read {d.gpu}"
            )


def _documents(name: str):
    loaded = load_bytes((corpus() / name).read_bytes(), name, 64 * 1024 * 1024)
    for doc in loaded.documents:
        root = doc.root
        if root is None or not hasattr(root, "value"):
            continue
        kind = root.value("kind")
        meta = root.at("metadata", "name")
        label = f"{kind}/{meta.value}" if kind and meta is not None else None
        yield label, root.line + 1, root.end_line + 1


NON_LLM = [(n, v["non_llm"]) for n, v in sorted(EXPECTED.items()) if v["parses"] and v.get("non_llm")]


@pytest.mark.parametrize(
    ("name", "non_llm"), shared_params(("corpus", "manifests"), NON_LLM, ids=lambda nq: nq[0][:70], width=2)
)
def test_no_finding_on_documents_that_serve_no_model(name, non_llm):
    result = lint(name)
    quiet = {str(x) for x in non_llm}
    spans = [(start, end) for label, start, end in _documents(name) if label in quiet]
    for f in result.findings:
        for start, end in spans:
            assert not start <= f.where.line < end, f"{f.where} {f.rule} inside a non-LLM document"


def test_corpus_totals():
    """Every workload the table lists is recognised; the totals are what the closing note reports."""
    recognised = 0
    for name, info in EXPECTED.items():
        if info["parses"]:
            recognised += len(lint(name).deployments)
    assert recognised >= len(WORKLOADS)


# --- Both folders: kvlint's whole output per file, hand-checked (tests/data/corpus_findings.yaml) ---

import corpus_expect  # noqa: E402  (tests/corpus_expect.py: the table's reader and its regeneration helper)

TABLE = corpus_expect.load_table()
UPDATE = "python tests/corpus_expect.py --update"


@pytest.fixture(scope="module")
def seen() -> dict[str, dict]:
    if not corpus_expect.CORPUS.is_dir():
        pytest.skip(f"{corpus_expect.CORPUS} is absent")
    return corpus_expect.observe()


def test_the_findings_table_covers_both_folders_exactly():
    files = corpus_expect.corpus_files()
    if not files:
        pytest.skip("../shared/corpus is absent")
    assert len(files) >= 296
    assert set(TABLE) == set(files), f"add or drop entries with `{UPDATE} FILE`"


@pytest.mark.parametrize("key", shared_params("corpus", sorted(TABLE)))
def test_findings_and_workloads_are_what_the_table_holds(key, seen):
    want, got = corpus_expect.machine(TABLE[key]), corpus_expect.machine(seen.get(key, {}))
    hint = f"re-check the file, then `{UPDATE} {key.split('/')[-1]}`"
    assert got["workloads"] == want["workloads"], f"workloads recognised changed; {hint}"
    assert got["findings"] == want["findings"], f"findings appeared, disappeared or moved; {hint}"


@pytest.mark.parametrize("key", sorted(TABLE))
def test_every_warning_and_error_carries_a_hand_checked_why(key):
    entry = TABLE[key]
    assert not entry.get("recheck"), f"{key}: re-check by hand, then delete `recheck`: {entry['recheck']}"
    for f in entry["findings"]:
        if f["severity"] in corpus_expect.CHECKED:
            assert len(str(f.get("why") or "").strip()) >= 12, (
                f"{key}: {f['code']} line {f['line']} has no why"
            )


def test_the_table_helper_keeps_notes_and_flags_changes():
    old = {
        "workloads": [
            {"line": 3, "kind": "Deployment", "name": "a", "engine": "vllm", "model": "m", "plan": True}
        ],
        "findings": [
            {"code": "KV103", "line": 40, "severity": "warning", "why": "max-num-seqs 512 stated at line 40"},
            {"code": "KV201", "line": 9, "severity": "warning", "why": "8 GPUs requested, TP 4"},
        ],
    }
    new = {
        "workloads": [
            {"line": 3, "kind": "Deployment", "name": "a", "engine": "vllm", "model": "m", "plan": False}
        ],
        "findings": [
            {"code": "KV103", "line": 40, "severity": "warning"},
            {"code": "KV201", "line": 11, "severity": "warning"},
            {"code": "KV208", "line": 12, "severity": "warning"},
        ],
    }
    out = corpus_expect.merge(old, new)
    assert [f["why"] for f in out["findings"]] == [
        "max-num-seqs 512 stated at line 40",
        "8 GPUs requested, TP 4",
        "",
    ]
    assert out["recheck"] == [
        "new warning KV201 line 11 (was line 9)",
        "new warning KV208 line 12",
        "workload lost its capacity plan: Deployment/a (vllm, m)",
    ]
    checked = {**out, "recheck": []}  # a person re-checked the file and deleted the flag
    assert "recheck" not in corpus_expect.merge(checked, new)


def test_the_table_reads_back_what_the_helper_writes(tmp_path):
    entry = {
        "workloads": [
            {k: None for k in corpus_expect.WORKLOAD_KEYS} | {"model": "Qwen/Qwen3-8B", "plan": True}
        ],
        "findings": [{"code": "KV001", "line": 2, "severity": "error", "why": 'a "quoted" reason: yes'}],
        "recheck": ["new error KV001 line 2"],
    }
    path = tmp_path / "t.yaml"
    path.write_text(corpus_expect.dump({"manifests/on: off.yaml": entry}), encoding="utf-8")
    assert corpus_expect.load_table(path) == {"manifests/on: off.yaml": entry}
