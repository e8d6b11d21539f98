"""GLM-4.5-family (Glm4MoeForCausalLM) catalog entries against their published sizes.

Figures: the transformers Glm4Moe model page (https://huggingface.co/docs/transformers/en/model_doc/glm4_moe,
also the zai-org/GLM-4.5 README): "GLM-4.5 has 355 billion total parameters with 32 billion active
parameters, while GLM-4.5-Air ... 106 billion total parameters and 12 billion active parameters".
zai-org/GLM-4.7 has the 355B geometry (92 layers x 5120, 160 experts of 1536, 8 per token, 3 dense
layers: the layout of scripts/models/glm4.5-355B-A32B.sh in the slime RL framework, github zyzshishui/slime)
and PrimeIntellect/INTELLECT-3 the 106B-A12B one (46 layers x 4096, 128 experts of 1408, 1 dense layer).
ModelArch.params leaves out the MTP layer (loaded only for MTP speculative decoding, ModelArch.mtp_params:
4.0B and 2.4B here); the 1% tolerance does not depend on whether the published total counts it
(352.8B / 106.9B without it). The active figures are matched without the input embedding and the untied
output head (32.1B / 12.2B).

KV per token: every layer is full attention with 8 KV heads of head_dim 128 (no MLA), so
2 (K and V) x 8 x 128 x layers x 2 bytes in bf16 -- the MTP layer's own cache only exists when vLLM runs it.
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of, idle_expert_params


def _active_non_embedding(arch) -> int:
    return arch.params - idle_expert_params(arch) - arch.embed_params - arch.lm_head_params


@pytest.mark.parametrize(
    ("model_id", "total", "active", "kv_bytes_bf16"),
    [
        ("zai-org/GLM-4.7", 355e9, 32e9, 2 * 8 * 128 * 92 * 2),
        ("PrimeIntellect/INTELLECT-3", 106e9, 12e9, 2 * 8 * 128 * 46 * 2),
        ("PrimeIntellect/INTELLECT-3-Base", 106e9, 12e9, 2 * 8 * 128 * 46 * 2),
        ("zai-org/GLM-4.5-Air", 106e9, 12e9, 2 * 8 * 128 * 46 * 2),  # twin (Megatron-Bridge's provider)
        ("zai-org/GLM-4.5", 355e9, 32e9, 2 * 8 * 128 * 92 * 2),  # Megatron-Bridge GLM45ModelProvider355B
    ],
)
def test_glm4_moe_sizes_match_the_published_figures(model_id, total, active, kv_bytes_bf16):
    arch = arch_of(model_id)
    assert not arch.mla and arch.kv_heads == 8 and arch.head_dim == 128
    assert 2 * arch.kv_heads * arch.head_dim * arch.attention_layers * 2 == kv_bytes_bf16
    assert arch.params == pytest.approx(total, rel=0.01)
    assert _active_non_embedding(arch) == pytest.approx(active, rel=0.02)
    assert arch.mtp_params > 0  # num_nextn_predict_layers: 1, priced apart from the decoder


def test_glm47_bf16_and_fp8_releases_share_the_geometry():
    bf16, fp8 = arch_of("zai-org/GLM-4.7"), arch_of("zai-org/GLM-4.7-FP8")
    assert (bf16.layers, bf16.kv_heads, bf16.head_dim, bf16.num_experts) == (
        fp8.layers,
        fp8.kv_heads,
        fp8.head_dim,
        fp8.num_experts,
    )
    assert bf16.max_positions == 202752


def test_glm45_is_the_glm47_geometry_with_128k_positions():
    """Megatron-Bridge's GLM-4.5 355B provider (seq_length 131072) vs GLM-4.7's config (202752)."""
    glm45, glm47 = arch_of("zai-org/GLM-4.5"), arch_of("zai-org/GLM-4.7")
    assert glm45.params == glm47.params and glm45.layer_kinds == glm47.layer_kinds
    assert (glm45.max_positions, glm47.max_positions) == (131072, 202752)
