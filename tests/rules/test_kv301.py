"""KV301 gib-gb-mixup: a planned size that matches only with GB and GiB swapped (2 % window)."""

from __future__ import annotations

import pytest
from rulecase import findings, plan, run

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _weights() -> int:
    return plan(run(model=LLAMA, gpu="H100", max_context=16384, max_sequences=24)).weights_total


@pytest.mark.parametrize(
    ("factor", "flagged"), [(1.0, True), (1.019, True), (0.981, True), (1.03, False), (0.97, False)]
)
def test_the_2_percent_window_around_the_swapped_unit(factor, flagged):
    """Written in GiB, meant in GB: flagged while the GB reading is within 2 % of kvlint's figure."""
    gb = _weights() * factor / 1e9
    r = run(model=LLAMA, gpu="H100", max_context=16384, max_sequences=24, budget={"weights": f"{gb:.3f}GiB"})
    assert bool(findings(r, "KV301")) is flagged, [f.message for f in r.findings]


def test_the_right_unit_is_not_a_mixup():
    gib = _weights() / 2**30
    r = run(model=LLAMA, gpu="H100", max_context=16384, max_sequences=24, budget={"weights": f"{gib:.3f}GiB"})
    assert not findings(r, "KV301") and not findings(r, "KV303")


def test_marketed_gpu_memory_is_named():
    r = run(model=LLAMA, gpu="H100", max_context=16384, max_sequences=24, budget={"gpu_memory": "80GiB"})
    (f,) = findings(r, "KV301")
    assert "80" in f.message
