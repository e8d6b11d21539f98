"""Vision-language catalog rows (issue #11): KV from the text model, the vision tower's weights counted.

- zai-org/GLM-4.5V: transformers' Glm4vMoe config classes (documented with checkpoint zai-org/GLM-4.5V) and
  NVIDIA Megatron-Bridge's GLM45VModelProvider state the GLM-4.5-Air language model; the GLM-V README: "based
  on GLM-4.5-Air (106B parameters, 12B active)"; zai-org/GLM-V issue #117 quotes the release's context, 65,536.
  The tower is laid out as vLLM's glm4_1v.py builds it (blocks' MLP out_hidden_size wide, the merger
  intermediate_size wide).
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of, idle_expert_params

from kvlint.catalog.vision import vision_params


def test_glm_4_5v_is_glm_4_5_air_without_mtp_plus_the_glm4v_tower():
    vl, air = arch_of("zai-org/GLM-4.5V"), arch_of("zai-org/GLM-4.5-Air")
    # the language model is GLM-4.5-Air's, layer for layer (106,852,245,504); Air's MTP layer is counted
    # apart (mtp_params) and the VLM has none
    assert vl.params - vl.vision_params == air.params and air.mtp_params > 0 == vl.mtp_params
    assert vl.params - vl.vision_params == pytest.approx(106e9, rel=0.01)  # "106B parameters"
    active = vl.params - idle_expert_params(vl) - vl.vision_params - vl.embed_params - vl.lm_head_params
    assert active == pytest.approx(12e9, rel=0.03)  # "12B active" (12.18B without the embeddings)
    # KV per token from the text model: 46 layers x 8 KV heads x 128 x K and V x bf16
    assert (vl.layers, vl.kv_heads, vl.head_dim, vl.attention_layers) == (46, 8, 128, 46)
    assert vl.max_positions == 65536  # the released config (GLM-V #117), not Air's 131,072


def test_glm4v_tower_counts_every_module_of_vllms_layout():
    v = {
        "model_type": "glm4v_moe_vision",
        "depth": 24,
        "hidden_act": "silu",
        "hidden_size": 1536,
        "image_size": 336,
        "intermediate_size": 10944,
        "out_hidden_size": 4096,
        "patch_size": 14,
        "spatial_merge_size": 2,
    }
    n, note = vision_params({"vision_config": v}, 4096)
    block = (
        3 * 1536 * 1536 + 1536 * 1536 + 3 * 1536 * 4096 + 2 * 1536
    )  # qkv, proj, gated MLP of 4096, 2 RMSNorms
    patch_embed = 3 * 2 * 14 * 14 * 1536 + 1536  # Linear over channels x temporal 2 x 14 x 14, with bias
    positions = (336 // 14) ** 2 * 1536
    downsample = 1536 * 4096 * 2 * 2 + 4096  # Conv2d hidden -> out over the 2 x 2 merge, with bias
    merger = 4096 * 4096 + 2 * 4096 + 3 * 4096 * 10944  # proj, LayerNorm, gated MLP 4096 -> 10944 -> 4096
    assert n == 24 * block + patch_embed + positions + 2 * 1536 + downsample + merger == 858_681_856
    assert "GLM-4V layout" in note
    # a tower that names another family keeps the plain ViT arithmetic
    assert vision_params({"vision_config": dict(v, model_type="vit")}, 4096)[0] != n
