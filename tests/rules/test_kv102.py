"""KV102 kv-cache-below-max-context: one sequence of max_context does not fit the pool."""

from __future__ import annotations

import pytest
from rulecase import findings, plan, run

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize(
    ("engine", "version"), [("vllm", "0.10.1"), ("sglang", "0.4.6.post1"), ("tgi", "3.0.0")]
)
def test_boundary_is_the_longest_context_the_pool_holds(engine, version):
    """The engine's own largest fitting length passes; one block more fails (each engine)."""
    probe = run(
        engine=engine, engine_version=version, model=LLAMA, gpu="L4", max_context=131072, max_sequences=1
    )
    p = plan(probe)
    assert findings(probe, "KV102"), "128k on an L4 must not fit"
    if (
        engine == "tgi"
    ):  # a 128k warm-up batch does not fit at all; the boundary is found by the verdict itself
        _tgi_boundary(version)
        return
    fit = p.max_len_that_fits
    assert 0 < fit < 131072
    ok = run(engine=engine, engine_version=version, model=LLAMA, gpu="L4", max_context=fit, max_sequences=1)
    assert not findings(ok, "KV102"), [f.message for f in ok.findings]
    over = run(
        engine=engine,
        engine_version=version,
        model=LLAMA,
        gpu="L4",
        max_context=fit + p.block_size,
        max_sequences=1,
    )
    (f,) = findings(over, "KV102")
    assert (
        f"{fit}" in (f.fix or "")
        or str(fit) in " ".join(f.details)
        or f"{fit:,}" in f.message + (f.fix or "")
    )


def test_message_states_need_pool_and_what_the_engine_does():
    r = run(model=LLAMA, gpu="L4", max_context=131072, max_sequences=4)
    (f,) = findings(r, "KV102")
    assert "one sequence of 131,072 tokens needs 16.00 GiB of KV cache" in f.message
    assert f.message.endswith("vLLM refuses to start")
    assert any(line.startswith("GPU memory the engine sees") for line in f.details)


def test_fp8_kv_is_offered_only_when_it_would_fit():
    """fp8 halves KV per token: offered for a context within 2x of the pool, not for one far beyond."""
    near = run(model=LLAMA, gpu="L4", max_context=40000, max_sequences=1)
    (f,) = findings(near, "KV102")
    assert "fp8" in (f.fix or "")
    far = run(model=LLAMA, gpu="L4", max_context=131072, max_sequences=1)
    (g,) = findings(far, "KV102")
    assert "fp8 (halves" not in (g.fix or "")


def test_weights_that_do_not_fit_are_kv101s_not_kv102s():
    r = run(model="meta-llama/Llama-3.1-70B-Instruct", gpu="L4", max_context=8192)
    assert findings(r, "KV101") and not findings(r, "KV102")


def test_already_fp8_kv_cache_is_not_told_to_use_fp8():
    r = run(model=LLAMA, gpu="L4", max_context=131072, kv_cache_dtype="fp8", max_sequences=1)
    (f,) = findings(r, "KV102")
    assert "kv_cache_dtype fp8" not in (f.fix or "")


def test_tgi_v3_default_total_tokens_warm_up_holds_only_the_prompt_slots():
    """TGI v3 with max_total_tokens unset sends its warm-up requests with max_new_tokens 1
    (backends/v3/src/client/grpc_client.rs warmup), so the warm-up batch holds the prompt's own
    slots, not max_position_embeddings of them: Llama-3.1-8B on one L4 warms up and sizes a cache."""
    r = run(engine="tgi", engine_version="3.3.7", model="meta-llama/Llama-3.1-8B-Instruct", gpu="L4")
    assert not findings(r, "KV102")
    assert plan(r).kv_pool > 0
    stated = run(
        engine="tgi",
        engine_version="3.3.7",
        model="meta-llama/Llama-3.1-8B-Instruct",
        gpu="L4",
        max_context=131072,
    )
    (f,) = findings(stated, "KV102")
    assert "Not enough memory to handle" in f.message  # a stated 131,072 gets warm-up blocks for all of it


def _tgi_boundary(version: str) -> None:
    """TGI's pool follows the stated length (the warm-up batch's blocks count), so the largest length that
    passes is searched for; KV102 one token above it names that length as the largest that fits."""

    def fails(n: int) -> bool:
        return bool(
            findings(
                run(
                    engine="tgi",
                    engine_version=version,
                    model=LLAMA,
                    gpu="L4",
                    max_context=n,
                    max_sequences=1,
                ),
                "KV102",
            )
        )

    lo, hi = 1, 131072
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (lo, mid - 1) if fails(mid) else (mid, hi)
    assert 8192 < lo < 131072 and all(fails(n) for n in (lo + 1, lo + 1000, 2 * lo))
    (f,) = findings(
        run(engine="tgi", engine_version=version, model=LLAMA, gpu="L4", max_context=lo + 1, max_sequences=1),
        "KV102",
    )
    assert f"set max_context {lo} (the largest that fits)" in (f.fix or ""), f.fix
