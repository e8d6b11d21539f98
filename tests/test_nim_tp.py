"""NIM_TENSOR_PARALLEL_SIZE against the profiles the image's release publishes (kvlint.engines.nim.parallel):
a TP no profile runnable on the pod's GPUs has is a located warning at the variable, naming the TPs that
release publishes for that GPU; a TP a profile has is planned under that profile."""

from __future__ import annotations

from conftest import gpu_pod
from test_nim_engine import _not_modelled, _one

from kvlint.findings import Severity

IMAGE = "nvcr.io/nim/meta/llama3-8b-instruct:1.0.3"


def _on_l40s(gpus: int, tp: str) -> str:
    return gpu_pod(IMAGE, [], {"NIM_TENSOR_PARALLEL_SIZE": tp}, gpus=gpus).replace(
        "NVIDIA-H100-80GB-HBM3", "NVIDIA-L40S"
    )


def test_a_tp_the_release_publishes_no_profile_of_is_said_at_the_variable():
    text = _on_l40s(4, "4")
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV201"]
    assert f.severity is Severity.WARNING and r.plan is None
    line = text.splitlines()[f.where.line - 1]
    assert line[f.where.column - 1 :].startswith('"4"') and "NIM_TENSOR_PARALLEL_SIZE" in line
    assert "those runnable have TP 1, 2" in f.message
    assert "(1, 2)" in (f.fix or "")
    assert not _not_modelled(findings)  # said once, where the value is, not as a KV004 at the image


def test_a_tp_a_published_profile_has_is_planned_under_it():
    r, findings = _one(_on_l40s(2, "2"))
    assert r.plan is not None and r.settings.tp == 2
    assert not [f for f in findings if f.rule in ("KV201", "KV004")]
