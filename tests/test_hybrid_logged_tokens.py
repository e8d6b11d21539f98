"""What vLLM logs as a hybrid model's KV capacity, and what KV102/KV103 count instead.

A hybrid model's attention and state (Mamba / linear-attention) groups share one pool of block ids, so no
single token count is the pool's. vLLM's start-up line "GPU KV cache size: N tokens" was num_blocks //
groups x block size until 0.20.0 (vllm==0.20.0:vllm/v1/core/kv_cache_utils.py:1694) and is max_concurrency x
max_model_len from 0.20.1 (vllm==0.20.1:...kv_cache_utils.py:1706); vLLM issue #40691 reported the old
figure wrong for Qwen3.5. kvlint's plan gives the figure the release logs (Plan.kv_tokens), while KV102 and
KV103 count the blocks one request takes, attention and state together (Plan.request_units).

Logs (public, each a Qwen3.6-35B-A3B NVFP4 copy on an RTX 5090, vLLM v0.24.0, fp8 KV cache, max_model_len
131,072, prefix caching on, so two state blocks per request and group):
- https://github.com/noonghunna/club-3090/issues/612: "Available KV cache memory: 5.98 GiB", "GPU KV cache
  size: 567,978 tokens", "Maximum concurrency for 131,072 tokens per request: 4.33x";
- https://github.com/noonghunna/club-3090/issues/652: 6.01 GiB, 569,878 tokens, 4.35x.
The pool is the logged one (--kv-cache-memory-bytes), so the check is the layout, not the memory profile.
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of
from conftest import vllm_settings

from kvlint.catalog.gpus import lookup as lookup_gpu
from kvlint.engines.vllm import plan as vllm
from kvlint.units import GIB

QWEN36 = "Qwen/Qwen3.6-35B-A3B"


def _plan(pool_gib: float, version: str):
    arch = arch_of(QWEN36)
    gpu = lookup_gpu("RTX 5090")
    assert gpu is not None
    s = vllm_settings(
        version=version,
        max_model_len=131_072,
        max_num_seqs=1,
        kv_cache_dtype="fp8",
        kv_cache_memory_bytes=int(pool_gib * GIB),
        extra={"enable_prefix_caching": True},
    )
    return vllm.plan(arch, gpu, s)


@pytest.mark.parametrize(
    ("pool_gib", "logged_tokens", "logged_x"), [(5.98, 567_978, "4.33"), (6.01, 569_878, "4.35")]
)
def test_a_hybrid_plan_gives_the_tokens_and_concurrency_vllm_logged(pool_gib, logged_tokens, logged_x):
    p = _plan(pool_gib, "0.24.0")
    assert p.kv_tokens == logged_tokens
    # vLLM's concurrency counts every block id; kvlint's leaves out the null block a request cannot use
    assert f"{p.num_blocks / p.request_units:.2f}" == logged_x
    assert p.max_concurrency == pytest.approx((p.num_blocks - 1) / p.request_units)
    # the blocks one request takes: its attention blocks and two per state group (3 groups)
    assert p.request_units == -(-131_072 // p.block_size) + 2 * 3


def test_the_same_pool_logs_fewer_tokens_before_0_20_1_and_holds_the_same_requests():
    new, old = _plan(5.98, "0.24.0"), _plan(5.98, "0.20.0")
    assert old.num_blocks == new.num_blocks and old.max_concurrency == new.max_concurrency
    assert old.kv_tokens == new.num_blocks // 4 * new.block_size < new.kv_tokens


def test_kv_per_token_counts_attention_layers_only_with_prefix_caching_on():
    """The 30 linear-attention layers keep a state per request, not KV per token, whatever the state mode."""
    p = _plan(5.98, "0.24.0")
    assert p.kv_per_token == 10 * 2 * 2 * 256 * 1  # 10 attention layers x K,V x 2 KV heads x 256 x fp8
