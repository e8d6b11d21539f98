"""What the file says is frozen after extract: no stage after it writes the Deployment.

At run time, a linted deployment refuses every write (its fields, `extra` and its other tables and
lists); in the source, no module after extract assigns to a Deployment field or its `extra` (the AST
scan of benchmarks/house_figures.py, which measures the same thing for the review's figures). The
engine's defaults, the fleet's GPU and the shared-card sums live beside it, in `Resolved.in_force`.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, gpu_pod, lint

from kvlint.deployment import stated
from kvlint.record import FrozenRecordError

# The stages that build the record: extract, with the engine packages' launch readers (the link stage
# derives new records from the frozen ones, kvlint/link/claims.py and pools.py).
BUILDERS = ("kvlint/extract/", "kvlint/load/")


def _linted():
    text = gpu_pod("vllm/vllm-openai:v0.10.0", ["--model", "Qwen/Qwen3-8B", "--max-model-len", "8192"])
    (r,) = lint(text).deployments
    return r


def test_a_write_after_extract_raises():
    r = _linted()
    d = r.deployment
    assert d.max_context is not None and d.max_context.value == 8192
    with pytest.raises(FrozenRecordError):
        d.max_context = stated(4096, None)
    with pytest.raises(FrozenRecordError):
        d.extra["max_num_seqs"] = stated(4, None)
    with pytest.raises(FrozenRecordError):
        d.extra.pop("max_model_len_auto", None)
    with pytest.raises(AttributeError):
        d.issues.append(r.issues[0] if r.issues else None)  # type: ignore[attr-defined]
    assert d.max_context.value == 8192


def test_the_defaults_live_beside_the_deployment():
    r = _linted()
    d, f = r.deployment, r.in_force
    assert d.max_sequences is None and d.gpu_memory_utilization is None  # the file states neither
    assert f.max_sequences is not None and f.max_sequences.origin == "default"
    assert f.gpu_memory_utilization is not None and f.gpu_memory_utilization.origin == "default"
    assert f.max_context == d.max_context  # a stated value is in force as stated, at its place


def test_a_frozen_deployment_survives_a_worker_process():
    import pickle

    d = _linted().deployment
    back = pickle.loads(pickle.dumps(d))
    assert back == d and back.frozen
    with pytest.raises(FrozenRecordError):
        back.extra["x"] = stated(1, None)


def test_no_module_after_extract_assigns_to_a_deployment():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import house_figures as hf

    trees = hf._modules(ROOT)
    fields = hf._deployment_fields(trees)
    writes = []
    for rel, tree in trees.items():
        name = rel.rsplit("/", 1)[-1]
        reader = rel.startswith("kvlint/engines/") and name in hf.ENGINE_READERS
        if rel.startswith(BUILDERS) or reader:
            continue
        for node in hf.ast.walk(tree):
            if isinstance(node, (hf.ast.Assign, hf.ast.AugAssign)) and hf._writes(node, fields):
                writes.append(f"{rel}:{node.lineno}")
    assert fields >= {"max_context", "gpu", "extra"}  # the scan reads the record's fields
    assert writes == []
