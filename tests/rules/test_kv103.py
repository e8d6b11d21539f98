"""KV103 kv-cache-below-worst-case: max_sequences of max_context do not all fit the pool."""

from __future__ import annotations

import math

import pytest
from rulecase import findings, plan, run

from kvlint.findings import Severity
from kvlint.rules.base import Thresholds

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
ENGINES = [("vllm", "0.10.1"), ("sglang", "0.4.6.post1"), ("tgi", "3.0.0")]


def _case(engine: str, version: str, seqs: int, thresholds: Thresholds | None = None):
    return run(
        thresholds,
        engine=engine,
        engine_version=version,
        model=LLAMA,
        gpu="L4",
        max_context=8192,
        max_sequences=seqs,
    )


@pytest.mark.parametrize(("engine", "version"), ENGINES)
def test_boundary_pair_at_the_pool(engine, version):
    """As many sequences as the pool holds pass; one more is a warning (each engine)."""
    holds = math.floor(plan(_case(engine, version, 1)).max_concurrency)
    assert holds >= 2
    assert not findings(_case(engine, version, holds), "KV103")
    (f,) = findings(_case(engine, version, holds + 1), "KV103")
    assert f.severity == Severity.WARNING
    assert f"set {f.fix.split()[1]} {holds} " in f.fix  # admit what fits


@pytest.mark.parametrize("margin", [0.1, 0.5])
def test_boundary_pair_with_a_headroom_margin(margin):
    """With kv103_margin the pool must hold max_sequences x (1 + margin)."""
    conc = plan(_case("vllm", "0.10.1", 1)).max_concurrency
    at = math.floor(conc / (1 + margin))
    t = Thresholds(kv103_margin=margin)
    assert not findings(_case("vllm", "0.10.1", at, t), "KV103")
    assert findings(_case("vllm", "0.10.1", at + 1, t), "KV103")
    assert not findings(_case("vllm", "0.10.1", at + 1), "KV103")  # the margin made the difference


def test_fragmentation_shrinks_what_fits():
    conc = plan(_case("vllm", "0.10.1", 1)).max_concurrency
    holds = math.floor(conc)
    assert not findings(_case("vllm", "0.10.1", holds), "KV103")
    (f,) = findings(_case("vllm", "0.10.1", holds, Thresholds(fragmentation=0.2)), "KV103")
    assert "after 20% fragmentation" in f.message


def test_engine_defaults_alone_are_information_not_a_warning():
    r = run(model="Qwen/Qwen3-0.6B", gpu="L4")
    (f,) = findings(r, "KV103")
    assert f.severity == Severity.INFO and "both limits are engine defaults" in f.message


def test_a_pool_that_cannot_hold_one_sequence_is_left_to_kv102():
    r = run(model=LLAMA, gpu="L4", max_context=131072, max_sequences=8)
    assert findings(r, "KV102") and not findings(r, "KV103")
