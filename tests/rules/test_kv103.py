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
    assert f" {holds} holds every admitted request at full length, but only {holds} at once" in f.fix


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


def _typical_fit(engine: str, version: str, expected: int, seqs: int = 64) -> int:
    """Requests of `expected` tokens the pool holds: the same deployment with a context that long (the same
    max_sequences, so the same CUDA-graph captures and the same pool)."""
    same = run(
        engine=engine, engine_version=version, model=LLAMA, gpu="L4", max_context=expected, max_sequences=seqs
    )
    return math.floor(plan(same).max_concurrency)


@pytest.mark.parametrize(("engine", "version"), ENGINES)
def test_a_throughput_service_is_told_its_typical_concurrency_not_to_cut_to_full_length(engine, version):
    """64 sequences of 8,192 tokens on one L4: about four run at full length, but at the default expected
    request (5,000 tokens) more do; the fix names both ends and applies neither (the traffic decides)."""
    holds = math.floor(plan(_case(engine, version, 1)).max_concurrency)
    typical = _typical_fit(engine, version, Thresholds().expected_tokens)
    assert holds < typical < 64
    (f,) = findings(_case(engine, version, 64), "KV103")
    assert f"at a typical request of 5,000 tokens (expected-tokens) {typical} fit" in f.message
    assert f.fix.startswith("a trade-off: ")
    assert f" {typical} holds that many requests of 5,000 tokens" in f.fix
    assert f" {holds} holds every admitted request at full length, but only {holds} at once" in f.fix
    assert not any(fix.edits for fix in f.fixes)  # a choice: shown, never applied


def test_expected_tokens_from_the_configuration_moves_the_typical_figure():
    short = findings(_case("vllm", "0.10.1", 64, Thresholds(expected_tokens=1000)), "KV103")[0]
    default = findings(_case("vllm", "0.10.1", 64), "KV103")[0]
    fit_short, fit_default = _typical_fit("vllm", "0.10.1", 1000), _typical_fit("vllm", "0.10.1", 5000)
    assert fit_short > fit_default
    assert f"at a typical request of 1,000 tokens (expected-tokens) {fit_short} fit" in short.message
    assert f"(expected-tokens) {fit_default} fit" in default.message


def test_when_all_fit_at_the_typical_length_nothing_is_cut():
    """16 sequences of 8,192 tokens: about four at full length, all 16 at 1,000 tokens a request; the fix says
    16 serve that traffic."""
    (f,) = findings(_case("vllm", "0.10.1", 16, Thresholds(expected_tokens=1000)), "KV103")
    assert "(expected-tokens) all 16 fit" in f.message
    assert "16 run at once while requests stay near 1,000 tokens" in f.fix


def test_a_context_within_the_expected_length_is_its_own_typical_request():
    """A context no longer than expected-tokens: the full length is the typical request; the fix admits what fits."""
    r = run(
        model=LLAMA, gpu="L4", max_context=4096, max_sequences=256, engine="vllm", engine_version="0.10.1"
    )
    holds = math.floor(plan(r).max_concurrency)
    (f,) = findings(r, "KV103")
    assert "typical request of" not in f.message
    assert f" {holds} admits only what fits" in f.fix


def test_sliding_window_layers_make_a_short_request_save_less_than_its_share():
    """gpt-oss alternates 128-token sliding-window layers with full ones: a 5,000-token request takes more
    than 5,000/8,192 of a full-length one, so the typical figure is the engine's count, not a proportion."""
    fields = dict(
        engine="vllm", engine_version="0.10.1", model="openai/gpt-oss-20b", gpu="L4", max_sequences=256
    )
    full = plan(run(max_context=8192, **fields)).max_concurrency
    same = math.floor(plan(run(max_context=5000, **fields)).max_concurrency)
    (f,) = findings(run(max_context=8192, **fields), "KV103")
    assert f"(expected-tokens) {same} fit" in f.message
    assert same < math.floor(full * 8192 / 5000)
