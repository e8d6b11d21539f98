"""Catalog rows for language-model architectures new to kvlint's catalog, each checked against a figure its
maker (or the model's own repository) publishes. Sources are recorded per entry in
benchmarks/catalog_curated.json.

- CofeAI/Tele-FLM: the official config.json (TeleFLMForCausalLM, a Llama-style MHA decoder with muP
  multipliers); the technical report (arXiv 2404.16645): "a 52B open-sourced multilingual large language model".
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of


def test_tele_flm_is_the_52b_mha_decoder():
    arch = arch_of("CofeAI/Tele-FLM")
    assert arch.params == pytest.approx(52e9, rel=0.02)  # 52,824,121,344
    assert (arch.layers, arch.kv_heads, arch.head_dim, arch.max_positions) == (64, 64, 128, 4096)
    assert arch.lm_head_params == arch.embed_params == 80384 * 8192  # untied
    assert 2 * arch.kv_heads * arch.head_dim * arch.attention_layers * 2 == 2_097_152  # KV bytes/token, bf16
