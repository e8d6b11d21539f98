"""Vision-language models catalogued from their makers' model builders: the text model's KV from its own
geometry, the tower's weights estimated from its stated sizes, each checked against a published figure.

- nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16: NVIDIA Megatron-Bridge's NemotronVLModelProvider (the language
  model is NemotronNano12Bv2: 62 layers, 6 of them attention) and its RADIO ViT-H tower. NVIDIA's C-RADIOv2-H
  card: "Huge (653M parameters)"; the VL card: 128K input + output tokens. The -FP8 release is the same
  architecture with FP8 weights, found by the name rule.
- moonshotai/Kimi-VL-A3B-Instruct: its card names Moonlight-16B-A3B as its base (Megatron-Bridge's
  MoonlightModelProvider16B geometry, MLA) and a MoonViT tower (moonshotai/MoonViT-SO-400M: "0.4B"); a real
  vLLM 0.19.0 start-up log of this id (llm-d-incubation/llm-d-planner PR #205, calibration v-063) logged
  "Available KV cache memory: 41.32 GiB" and "GPU KV cache size: 1,426,368 tokens", weights 30.74 GiB.
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of, idle_expert_params

from kvlint.catalog import models

# the vision projection (pixel shuffle 0.5 -> 5120 in, ffn 20480, LM width 5120), two bias-free matrices
_NEMOTRON_VL_PROJECTOR = 5120 * 20480 + 20480 * 5120


def test_nemotron_nano_12b_v2_vl_prices_its_lm_and_a_radio_h_tower():
    arch = arch_of("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16")
    tower = arch.vision_params - _NEMOTRON_VL_PROJECTOR
    assert tower == pytest.approx(653e6, rel=0.05)  # C-RADIOv2-H: 653M
    assert arch.params - arch.vision_params == pytest.approx(12.31e9, rel=0.005)  # the "12B" language model
    # only the 6 attention layers of 62 hold KV (8 heads x 128); 28 Mamba-2 layers hold a fixed state
    assert (arch.layers, arch.attention_layers, len(arch.state_layers)) == (62, 6, 28)
    assert (arch.kv_heads, arch.head_dim, arch.max_positions) == (8, 128, 131072)
    assert arch.state_bytes_per_seq > 0


def test_nemotron_nano_12b_v2_vl_fp8_is_the_bf16_release_with_fp8_weights():
    r = models.resolve("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-FP8")
    assert r.arch is not None and r.arch.quant is not None and r.arch.quant.method == "fp8"
    assert r.derived_from.startswith("architecture facts from nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16:")
    assert r.arch.params == arch_of("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16").params


def test_kimi_vl_a3b_kv_per_token_matches_a_vllm_log():
    arch = arch_of("moonshotai/Kimi-VL-A3B-Instruct")
    assert arch.mla and (arch.layers, arch.kv_heads, arch.head_dim) == (27, 1, 512 + 64)
    kv_bytes_per_token = arch.attention_layers * arch.kv_heads * arch.head_dim * 2  # bf16
    # the log's KV memory (rounded to 0.01 GiB) over its token count: 31,104 B/token
    assert kv_bytes_per_token == pytest.approx(41.32 * 2**30 / 1_426_368, rel=2e-4)
    assert arch.params * 2 / 2**30 == pytest.approx(30.74, rel=0.01)  # "Model loading took 30.74 GiB"
    assert arch.vision_params == pytest.approx(0.4e9, rel=0.15)  # MoonViT-SO-400M + its projector
    assert (arch.num_experts, arch.experts_per_token, arch.moe_layers) == (64, 6, 26)
    assert arch.max_positions == 131072  # the card's 128K context


def _lora_params(arch, rank: int) -> int:
    """A LoRA of `rank` on every linear of a Phi-3-style layer: qkv, o, gate_up, down (in + out) x rank."""
    h, q, kv, inter = (
        arch.hidden_size,
        arch.query_heads * arch.head_dim,
        arch.kv_heads * arch.head_dim,
        arch.intermediate_size,
    )
    per_layer = (h + q + 2 * kv) + (q + h) + (h + 2 * inter) + (inter + h)
    return arch.layers * per_layer * rank


def test_phi_4_multimodal_is_phi_4_mini_plus_its_encoders():
    arch = arch_of("microsoft/Phi-4-multimodal-instruct")
    mini = arch_of("microsoft/Phi-4-mini-instruct")
    assert arch.params - arch.vision_params == mini.params  # the shared, frozen language model
    assert (arch.layers, arch.kv_heads, arch.head_dim, arch.max_positions) == (32, 8, 128, 131072)
    # the speech LoRA (r 320) the repository ships separately: adapter_model.safetensors 923 MB in bf16
    assert _lora_params(arch, 320) * 2 == pytest.approx(923e6, rel=0.005)
    # served encoders (SigLIP 26 layers + conformer) plus both LoRAs make the card's 5.6B
    assert arch.params + _lora_params(arch, 256) + _lora_params(arch, 320) == pytest.approx(5.6e9, rel=0.02)
    assert "audio" in arch.vision_note


def test_conformer_block_absent_or_malformed_counts_nothing():
    from kvlint.catalog.conformer import conformer_params

    phi4mm = arch_of("microsoft/Phi-4-multimodal-instruct").parsed_from[0]
    audio = conformer_params(phi4mm, 3072)
    assert audio == pytest.approx(0.46e9, rel=0.03)  # the tech report's audio encoder + projector, ~460M
    for bad in ({}, {"audio_processor": "cascades"}, {"audio_processor": {"config": {"num_blocks": 24}}}):
        assert conformer_params(bad, 3072) == 0


def test_deepseek_vl2_matches_its_readme_total_and_activated():
    """DeepSeek-VL2 README (deepseek-ai/DeepSeek-VL2): "vl27.5-MoE in total", "4.5B activated parameters",
    sequence length 4096; its language model uses MLA (kv_lora_rank 512), unlike -tiny and -small."""
    arch = arch_of("deepseek-ai/deepseek-vl2")
    assert arch.params == pytest.approx(27.5e9, rel=0.01)
    assert arch.params - arch.vision_params - idle_expert_params(arch) == pytest.approx(4.5e9, rel=0.02)
    assert arch.mla and (arch.layers, arch.kv_heads, arch.head_dim) == (30, 1, 512 + 64)
    assert (arch.num_experts, arch.experts_per_token, arch.moe_layers, arch.max_positions) == (
        72,
        6,
        29,
        4096,
    )


def test_dots_vlm1_is_deepseek_v3_plus_a_1_2b_navit():
    """rednote-hilab's README: "a 1.2 billion-parameter vision encoder and the DeepSeek V3 large language
    model"; its blog: 42 layers, SwiGLU. The tower is counted with three MLP matrices (SwiGLU)."""
    arch = arch_of("rednote-hilab/dots.vlm1.inst")
    v3 = arch_of("deepseek-ai/DeepSeek-V3")
    assert arch.params - arch.vision_params == v3.params  # the DeepSeek V3 language model
    merger = 1536 + (1536 * 4) ** 2 + 1536 * 4 + 1536 * 4 * 7168 + 7168  # 2 x 2 merge into the LM width
    assert arch.vision_params - merger == pytest.approx(1.2e9, rel=0.03)
    assert arch.mla and (arch.layers, arch.head_dim) == (61, 512 + 64) and arch.quant is None


def test_dots_navit_towers_are_priced_with_their_swiglu_mlp():
    """vLLM dots_ocr.py DotsSwiGLUFFN: every dots NaViT block has fc1/fc3 (gated) and fc2, though the
    vision_config names no activation. rednote-hilab: a 1.2B visual encoder (dots.ocr), 42 layers x 1536."""
    arch = arch_of("rednote-hilab/dots.ocr")
    merger = 1536 + (1536 * 4) ** 2 + 1536 * 4 + 1536 * 4 * 1536 + 1536  # 2 x 2 merge into the 1536-wide LM
    assert arch.vision_params - merger == pytest.approx(1.2e9, rel=0.03)
    assert arch.params == pytest.approx(3.04e9, rel=0.01)  # 1.78B language model + the tower


def test_phi4mm_image_embedding_implies_the_siglip_tower_engines_build():
    """Phi-4-multimodal's config has no vision_config: embd_layer.image_embd_layer ("tune_image") stands for the
    SigLIP-so400m that vLLM (phi4mm.py, layer_idx=-2) and SGLang build with 26 layers of width 1152."""
    from kvlint.catalog.hf_config import parse_config

    config = arch_of("microsoft/Phi-4-multimodal-instruct").parsed_from[0]
    assert "vision_config" not in config
    arch = parse_config(config, "phi4mm", "test")
    assert (arch.vision_layers, arch.vision_hidden) == (26, 1152)  # what SGLang's multimodal factor reads
    embd = dict(config["embd_layer"], image_embd_layer={"embedding_cls": "image"})  # not Phi-4-MM's embedding
    other = dict(config, embd_layer=embd)
    tower = arch.vision_params - parse_config(other, "phi4mm", "test").vision_params
    assert tower == pytest.approx(0.41e9, rel=0.03)  # SigLIP-so400m's 26 layers + the 1152 -> 3072 projection
