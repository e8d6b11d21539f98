"""Catalog rows for current releases of mainstream families, each checked against what its maker publishes
(sources per entry in benchmarks/catalog_sources.json and catalog_curated.json).

- MiniMaxAI/MiniMax-M1-80k / -40k: MiniMax's release repository (github:MiniMax-AI/MiniMax-M1@2abb4f45) ships
  the config and its model.safetensors.index.json (total_size 912,210,767,872 bytes); the README: "456 billion
  parameters with 45.9 billion parameters activated per token", two versions "with 40K and 80K thinking budgets".
- tencent/Hunyuan-A13B-Instruct: the config Tencent's release repository ships (github:Tencent-Hunyuan/Hunyuan-A13B
  @2798f3c8 models/config.json); the README: "a total of 80 billion parameters with 13 billion active".
- ibm-granite/granite-3.3-8b-instruct (and -FP8): the copies the vLLM project's Spyre plugin tests load
  (vllm-project/vllm-spyre@fc6b54b9 tests/fixtures/model_configs/ibm-granite).
- MiniMaxAI/MiniMax-M2.1: the M2 architecture (conversions of it state the M2.5 config); MiniMax's deployment
  guide (github:MiniMax-AI/MiniMax-M2.1@a8786249:docs/vllm_deploy_guide.md): "Memory requirements: 220 GB for
  weights, 240 GB per 1M context tokens".
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of

from kvlint.capacity.weights import weights
from kvlint.catalog import models

GIB = 2**30


def _kv_bytes_per_token(arch) -> int:
    """bf16 K and V of every layer that keeps a KV cache."""
    return 2 * arch.kv_heads * arch.head_dim * 2 * arch.attention_layers


def test_minimax_m1_prices_the_checkpoint_it_ships():
    arch = arch_of("MiniMaxAI/MiniMax-M1-80k")
    assert weights(arch, 1, 1).total == pytest.approx(912_210_767_872, rel=1e-3)  # the index's total_size
    assert arch.params == pytest.approx(456e9, rel=1e-3)  # "456 billion parameters"


def test_minimax_m1_keeps_kv_only_on_its_softmax_layers():
    """Lightning attention on 70 of the 80 layers holds a fixed state per sequence, not a growing KV cache."""
    arch = arch_of("MiniMaxAI/MiniMax-M1-80k")
    assert (arch.layers, arch.attention_layers, len(arch.state_layers)) == (80, 10, 70)
    assert arch.state_bytes_per_seq > 0
    assert _kv_bytes_per_token(arch) == 2 * 8 * 128 * 2 * 10


def test_minimax_m1_thinking_budgets_are_one_architecture():
    m80, m40 = models.lookup("MiniMaxAI/MiniMax-M1-80k"), models.lookup("MiniMaxAI/MiniMax-M1-40k")
    assert m80 is not None and m40 is not None
    assert m40["twin_of"] == "MiniMaxAI/MiniMax-M1-80k" and m40["arch"] == m80["arch"]


def test_minimax_m2_1_matches_its_makers_memory_figures():
    """The guide's 240 GB per 1M tokens is the M2 KV geometry (62 layers x 8 KV heads x 128, bf16) in GiB, and
    its 220 GB of weights the fp8 block-quantized checkpoint (a 16-bit one would be twice that)."""
    arch = arch_of("MiniMaxAI/MiniMax-M2.1")
    assert _kv_bytes_per_token(arch) * 1_000_000 / GIB == pytest.approx(240, rel=0.02)
    assert weights(arch, 1, 1).total / GIB == pytest.approx(220, rel=0.03)
    assert arch.quant is not None and arch.quant.method == "fp8"


def test_minimax_m2_1_quantized_copies_find_it_by_name():
    got = models.resolve("amd/MiniMax-M2.1-MXFP4")  # AMD's MXFP4 copy (Hugging Face, docs corpus)
    assert got.arch is not None and got.arch.quant is not None and got.arch.quant.method == "mxfp4"
    assert got.arch.layers == arch_of("MiniMaxAI/MiniMax-M2.1").layers


def test_hunyuan_a13b_is_the_80b_moe_its_release_repository_ships():
    """github:Tencent-Hunyuan/Hunyuan-A13B@2798f3c8 models/config.json; README: 'a total of 80 billion parameters
    with 13 billion active parameters'. use_cla is false there: every layer keeps its own KV."""
    arch = arch_of("tencent/Hunyuan-A13B-Instruct")
    assert arch.params == pytest.approx(80e9, rel=0.01)
    assert (arch.layers, arch.attention_layers, arch.kv_heads, arch.head_dim) == (32, 32, 8, 128)
    assert (arch.num_experts, arch.experts_per_token) == (64, 8)


def test_granite_3_3_and_its_fp8_release_share_one_geometry():
    """vllm-project/vllm-spyre@fc6b54b9 tests/fixtures/model_configs/ibm-granite: the 8b instruct config and IBM's
    FP8 release of it (compressed-tensors float8, per-channel weight scales, lm_head left in 16-bit)."""
    bf16, fp8 = (
        arch_of("ibm-granite/granite-3.3-8b-instruct"),
        arch_of("ibm-granite/granite-3.3-8b-instruct-FP8"),
    )
    assert (bf16.layers, bf16.kv_heads, bf16.head_dim, bf16.max_positions) == (40, 8, 128, 131072)
    assert fp8.params == bf16.params and fp8.quant is not None and bf16.quant is None
    # 8-bit linear weights, the tied 16-bit embedding (and lm_head) kept: a little over half the bf16 bytes
    assert 0.5 < weights(fp8, 1, 1).total / weights(bf16, 1, 1).total < 0.55
