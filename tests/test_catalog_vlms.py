"""Vision-language catalog rows (issue #11): KV from the text model, the vision tower's weights counted.

- zai-org/GLM-4.5V: transformers' Glm4vMoe config classes (documented with checkpoint zai-org/GLM-4.5V) and
  NVIDIA Megatron-Bridge's GLM45VModelProvider state the GLM-4.5-Air language model; the GLM-V README: "based
  on GLM-4.5-Air (106B parameters, 12B active)"; zai-org/GLM-V issue #117 quotes the release's context, 65,536.
  The tower is laid out as vLLM's glm4_1v.py builds it (blocks' MLP out_hidden_size wide, the merger
  intermediate_size wide).
- OpenGVLab/InternVL2_5-8B (model_type internvl_chat): OpenGVLab's card names the parts, InternViT-300M-448px-V2_5
  + internlm2_5-7b-chat joined by the mlp1 projector; InternViT cards: "Params (M): 304" (300M) and "5540 (the
  last 3 blocks are discarded)" (6B-448px-V1-5, 45 layers).
- XiaomiMiMo/MiMo-VL-7B-RL: Xiaomi's README and report: Qwen2.5-ViT + MLP projector + the MiMo-7B LM (36 x 4096,
  32 heads, 11008), served as Qwen2_5_VLForConditionalGeneration (no MTP layer); ViT 32 layers x 1280.
- lmms-lab/llava-onevision-qwen2-7b-ov, lmms-lab/llava-next-72b: the LLaVA-NeXT makers' recipe and README name
  the LLM (Qwen2-7B-Instruct, Qwen-1.5 72B) and the tower (SigLIP SO400M, CLIP ViT-L/14-336); mlp2x_gelu projector.
- Efficient-Large-Model/NVILA-8B: its config (Qwen2.5 LLM, 3584 / 18944, dynamic S2) and NVIDIA's NVILA recipe (SigLIP-448,
  S2 scales 448/896/1344, mlp_downsample); the checkpoint's own files weigh 827 MB (tower) and 125 MB (projector) in bf16.
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of, idle_expert_params

from kvlint.catalog.hf_config import compact, parse_config
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


_INTERNVIT_300M = {  # OpenGVLab/InternViT-300M-448px config.json (official)
    "hidden_size": 1024,
    "image_size": 448,
    "intermediate_size": 4096,
    "model_type": "intern_vit_6b",
    "norm_type": "layer_norm",
    "num_hidden_layers": 24,
    "patch_size": 14,
    "qk_normalization": False,
    "qkv_bias": True,
}
_INTERNVIT_6B_V1_5 = {  # OpenGVLab/InternViT-6B-448px-V1-5 config.json (official; no norm_type: RMSNorm)
    "hidden_size": 3200,
    "image_size": 448,
    "intermediate_size": 12800,
    "model_type": "intern_vit_6b",
    "num_hidden_layers": 45,
    "patch_size": 14,
    "qk_normalization": True,
    "qkv_bias": False,
}


def _mlp1(vit: int, llm: int) -> int:
    return 2 * 4 * vit + 4 * vit * llm + llm + llm * llm + llm  # LayerNorm, Linear, Linear (pixel shuffle x4)


@pytest.mark.parametrize(
    ("vit", "hidden", "card_m"), [(_INTERNVIT_300M, 1024, 304), (_INTERNVIT_6B_V1_5, 3200, 5540)]
)
def test_internvit_towers_match_their_cards(vit, hidden, card_m):
    config = {"model_type": "internvl_chat", "downsample_ratio": 0.5, "vision_config": vit}
    n, note = vision_params(config, 4096)
    assert n - _mlp1(hidden, 4096) == pytest.approx(card_m * 1e6, rel=0.002)
    assert "InternViT + mlp1" in note
    # without InternVL's pixel shuffle the projector is not mlp1: the plain-ViT arithmetic applies
    assert vision_params({"vision_config": vit}, 4096)[0] != n


def test_internvl2_5_8b_is_internlm2_5_7b_chat_plus_internvit_300m_and_mlp1():
    vl, lm = arch_of("OpenGVLab/InternVL2_5-8B"), arch_of("internlm/internlm2_5-7b-chat")
    # the language model is internlm2_5-7b-chat with InternVL's 9 added tokens in the embedding and the head
    assert vl.params - vl.vision_params == lm.params + 2 * 9 * 4096
    assert vl.vision_params == 304_012_288 + _mlp1(1024, 4096)
    assert 8.0e9 < vl.params < 8.2e9  # the "8B" of its name: 7.74B LM + 0.30B ViT + 34M projector
    # KV from the text model: 32 layers x 8 KV heads x 128, as the LM's
    assert (vl.layers, vl.kv_heads, vl.head_dim, vl.max_positions) == (lm.layers, 8, 128, lm.max_positions)


def test_mimo_vl_7b_is_mimo_7b_without_mtp_plus_the_qwen2_5_vl_tower():
    vl, lm = arch_of("XiaomiMiMo/MiMo-VL-7B-RL"), arch_of("XiaomiMiMo/MiMo-7B-RL")
    qwen_vl = arch_of("Qwen/Qwen2.5-VL-7B-Instruct")
    assert vl.params - vl.vision_params == lm.params and lm.mtp_params > 0 == vl.mtp_params
    assert (vl.layers, vl.query_heads, vl.hidden_size, vl.intermediate_size) == (
        36,
        32,
        4096,
        11008,
    )  # the report
    assert (vl.kv_heads, vl.head_dim, vl.max_positions, vl.sliding_window) == (8, 128, 32768, None)
    # the same 32 x 1280 ViT as Qwen2.5-VL-7B; only the merger's last projection ends at 4096 instead of 3584
    assert vl.vision_params - qwen_vl.vision_params == 5120 * (4096 - 3584) + (4096 - 3584)
    assert 8.2e9 < vl.params < 8.4e9  # the "7B" LM (7.62B) + a 0.68B tower


def _mlp2x(vit: int, llm: int) -> int:
    return vit * llm + llm * llm  # LLaVA's mlp2x_gelu (biases not counted)


def test_llava_onevision_7b_is_qwen2_7b_plus_siglip_so400m():
    vl, lm = arch_of("lmms-lab/llava-onevision-qwen2-7b-ov"), arch_of("Qwen/Qwen2-7B-Instruct")
    assert vl.params - vl.vision_params == lm.params  # KV and text weights are Qwen2-7B's
    assert (vl.layers, vl.kv_heads, vl.head_dim, vl.max_positions) == (28, 4, 128, 32768)
    siglip = vl.vision_params - _mlp2x(1152, 3584)
    assert siglip == pytest.approx(0.4e9, rel=0.02)  # "SO400M" (26 of its 27 layers kept by LLaVA-NeXT)
    assert "26 layers x hidden 1152" in vl.vision_note


def test_llava_next_72b_is_qwen1_5_72b_plus_clip_l_336():
    vl, lm = arch_of("lmms-lab/llava-next-72b"), arch_of("Qwen/Qwen1.5-72B-Chat")
    assert vl.params - vl.vision_params == lm.params
    assert (vl.layers, vl.kv_heads, vl.head_dim) == (80, 64, 128)  # Qwen1.5-72B has no GQA: 64 KV heads
    assert vl.vision_params - _mlp2x(1024, 8192) == pytest.approx(0.30e9, rel=0.02)  # CLIP ViT-L/14 (~304M)
    assert 72.0e9 < vl.params < 73.5e9


# InternVL2_5-2B's config.json as PaddlePaddle/PaddleMIX@0860a67 tests/models/test_internvl2.py spells it out
# (the keys kvlint reads; the rest are generation and training switches)
_INTERNVL2_5_2B = {
    "architectures": ["InternVLChatModel"],
    "model_type": "internvl_chat",
    "downsample_ratio": 0.5,
    "force_image_size": 448,
    "template": "internvl2_5",
    "llm_config": {
        "architectures": ["InternLM2ForCausalLM"],
        "bias": False,
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "max_position_embeddings": 32768,
        "model_type": "internlm2",
        "num_attention_heads": 16,
        "num_hidden_layers": 24,
        "num_key_value_heads": 8,
        "rope_scaling": {"factor": 2.0, "type": "dynamic"},
        "tie_word_embeddings": False,
        "vocab_size": 92553,
    },
    "vision_config": {**_INTERNVIT_300M, "architectures": ["InternVisionModel"], "num_channels": 3},
}


def test_a_full_internvl_config_compacts_and_prices_as_the_class():
    """What `kvlint models pull` stores (compact) keeps what prices the tower: downsample_ratio and the
    InternViT switches; KV comes from llm_config (24 layers x 8 KV heads x 128)."""
    kept = compact(_INTERNVL2_5_2B)
    assert kept["downsample_ratio"] == 0.5 and "template" not in kept
    assert {"qkv_bias", "qk_normalization", "norm_type"} <= set(kept["vision_config"])
    arch = parse_config(kept, "OpenGVLab/InternVL2_5-2B", "test")
    assert (arch.family, arch.layers, arch.kv_heads, arch.head_dim) == ("internlm2", 24, 8, 128)
    assert arch.vision_params == 304_012_288 + _mlp1(1024, 2048)
    assert 2.1e9 < arch.params < 2.3e9  # the "2B" of InternVL2_5-2B (1.89B LM + 0.30B ViT + 13M projector)


def test_nvila_8b_is_qwen2_5_7b_plus_siglip_448_and_an_s2_projector():
    vl, lm = arch_of("Efficient-Large-Model/NVILA-8B"), arch_of("Qwen/Qwen2.5-7B-Instruct")
    assert vl.params - vl.vision_params == lm.params
    assert (vl.layers, vl.kv_heads, vl.head_dim, vl.max_positions) == (28, 4, 128, 32768)
    projector = 4 * 1152 * 3 * 3584 + 3584 * 3584  # mlp_downsample over 3 S2 scales of 1152 (biases aside)
    assert 2 * projector == pytest.approx(125e6, rel=0.01)  # mm_projector/model.safetensors, bf16
    assert 2 * (vl.vision_params - projector) == pytest.approx(
        827e6, rel=0.01
    )  # vision_tower/model.safetensors


@pytest.mark.parametrize("ratio", [0, -0.5, 1.5, "0.5", True, None])
def test_an_unusable_downsample_ratio_falls_back_to_the_plain_projector(ratio):
    """A malformed downsample_ratio is not guessed into a pixel-shuffle width: the tower is still counted,
    with the generic projector, and nothing raises."""
    config = {"model_type": "internvl_chat", "downsample_ratio": ratio, "vision_config": _INTERNVIT_300M}
    n, note = vision_params(config, 4096)
    assert n > 0 and "mlp1" not in note
