"""KV302 query-heads-as-kv-heads: a declared KV-head count (or KV figure) that is the query-head one."""

from __future__ import annotations

from rulecase import findings, run

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # 32 query heads, 8 KV heads


def test_query_head_count_declared_as_kv_heads():
    (f,) = findings(run(model=LLAMA, gpu="L4", max_context=4096, architecture={"kv_heads": 32}), "KV302")
    assert f.fix == "kv_heads: 8" and "4x smaller" in f.message


def test_the_right_count_and_other_wrong_counts_are_not_this_rule():
    assert not findings(run(model=LLAMA, gpu="L4", max_context=4096, architecture={"kv_heads": 8}), "KV302")
    assert not findings(run(model=LLAMA, gpu="L4", max_context=4096, architecture={"kv_heads": 16}), "KV302")


def test_kv_per_token_computed_with_query_heads():
    # 2 x 32 layers x 32 heads x 128 x 2 B = 512 KiB: what query heads would give (KV heads: 128 KiB)
    (f,) = findings(run(model=LLAMA, gpu="L4", max_context=4096, budget={"kv_per_token": "512KiB"}), "KV302")
    assert "budget.kv_per_token 512KiB" in f.message and f.fix == "use 8 KV heads: 128 KiB"
    assert not findings(
        run(model=LLAMA, gpu="L4", max_context=4096, budget={"kv_per_token": "128KiB"}), "KV302"
    )
