"""Vision-language configs: the text model's KV from wherever the config nests it, the tower's weights
estimated from its own block.

Published sizes:
- Qwen-VL: LLM 7.7B + ViT 1.9B (+ 0.08B adapter) = 9.6B (arXiv:2308.12966 Table 1; quoted by
  https://aiwiki.ai/wiki/qwen_vl: "about 7.7B parameters ... roughly 1.9B parameters").
- MiniCPM-V 2.6: "built on SigLip-400M and Qwen2-7B with a total of 8B parameters"
  (https://inference.readthedocs.io/en/v2.10.0/models/builtin/llm/minicpm-v-2.6.html).
- DeepSeek-VL2-Tiny: 3.37B total (DeepSeek-VL2 paper, arXiv:2412.10302: Tiny 1.0B activated / 3.37B total);
  config from OME's test copy (github:sgl-project/ome@17b77ed pkg/hfutil/modelconfig/testdata/deepseek_vl2_tiny.json).
"""

import pytest

from kvlint.catalog.arch import FULL
from kvlint.catalog.hf_config import compact, parse_config
from kvlint.catalog.models import resolve


def test_qwen_vl_visual_block_is_counted():
    a = resolve("Qwen/Qwen-VL-Chat").arch
    assert a.params == pytest.approx(9.6e9, rel=0.01)
    assert a.vision_params == pytest.approx(1.9e9 + 0.08e9, rel=0.03)
    assert a.layers == 32 and a.kv_heads == 32 and a.head_dim == 128  # KV from the QWen LLM


def test_minicpm_v_2_6_is_qwen2_kv_and_a_siglip_tower():
    a = resolve("openbmb/MiniCPM-V-2_6").arch
    assert (a.layers, a.kv_heads, a.head_dim) == (28, 4, 128)
    assert a.params == pytest.approx(8.0e9, rel=0.02)
    assert 0.4e9 < a.vision_params < 0.5e9


def test_use_sliding_window_false_means_no_window_in_any_family():
    # vLLM ModelConfig.get_hf_config_sliding_window: a config whose use_sliding_window is false has no
    # window, whatever its model_type (MiniCPM-V states sliding_window 131072 beside it)
    for model in ("openbmb/MiniCPM-V-2_6", "Qwen/Qwen2-VL-7B-Instruct"):
        a = resolve(model).arch
        assert a.sliding_window is None and set(a.layer_kinds) == {FULL}, model


def test_clip_is_an_encoder_without_kv_cache():
    r = resolve("openai/clip-vit-large-patch14-336")
    assert r.no_kv_cache and r.arch is None


# The keys kvlint keeps (kvlint.catalog.hf_config.compact) of deepseek-ai/deepseek-vl2-tiny's config.json as
# OME's tests carry it (github:sgl-project/ome@17b77edad23bae262e0c9adb7f12039397a5d33d:
# pkg/hfutil/modelconfig/testdata/deepseek_vl2_tiny.json); stated here so the test reads no machine-local mirror.
DEEPSEEK_VL2_TINY = {
    "language_config": {
        "architectures": ["DeepseekV2ForCausalLM"],
        "first_k_dense_replace": 1,
        "hidden_size": 1280,
        "intermediate_size": 6848,
        "kv_lora_rank": None,
        "max_position_embeddings": 4096,
        "model_type": "deepseek_v2",
        "moe_intermediate_size": 896,
        "n_routed_experts": 64,
        "n_shared_experts": 2,
        "num_attention_heads": 10,
        "num_experts_per_tok": 6,
        "num_hidden_layers": 12,
        "num_key_value_heads": 10,
        "q_lora_rank": None,
        "qk_nope_head_dim": 0,
        "qk_rope_head_dim": 0,
        "torch_dtype": "bfloat16",
        "v_head_dim": 0,
        "vocab_size": 129280,
    },
    "model_type": "deepseek_vl_v2",
    "torch_dtype": "bfloat16",
    "vision_config": {
        "layers": 27,
        "mlp_ratio": 3.7362,
        "model_type": "vision",
        "patch_size": 14,
        "width": 1152,
    },
}


def test_language_config_nesting_and_openclip_width_names():
    a = parse_config(compact(DEEPSEEK_VL2_TINY), "deepseek-ai/deepseek-vl2-tiny", "test")
    assert a.family == "deepseek_v2" and a.layers == 12 and a.num_experts == 64
    assert a.params == pytest.approx(3.37e9, rel=0.01)
    assert 0.38e9 < a.vision_params < 0.45e9  # SigLIP so400m: 27 layers of width 1152


def test_trimmed_qwen2_vl_vision_config_gets_its_class_defaults():
    # a Qwen2-VL-7B fine-tune saved by transformers 4.47 keeps three keys of its vision_config
    # (https://huggingface.co/pbarker/Qwen2-VL-7B-sk-googleflights-full-750-47ep/blame/main/config.json);
    # transformers' Qwen2VLVisionConfig defaults supply the rest (depth 32, embed_dim 1280, mlp_ratio 4)
    text = resolve("Qwen/Qwen2-VL-7B-Instruct").arch.parsed_from[0]
    trimmed = {k: v for k, v in text.items() if k != "vision_config"}
    trimmed["vision_config"] = {"in_chans": 3, "model_type": "qwen2_vl", "spatial_patch_size": 14}
    full = resolve("Qwen/Qwen2-VL-7B-Instruct").arch
    a = parse_config(trimmed, "fine-tune", "test")
    assert a.vision_params == pytest.approx(full.vision_params, rel=0.01)
    assert a.vision_params > 0.6e9


def test_omni_thinker_is_what_is_priced():
    # Qwen2.5-Omni nests its served part under thinker_config (text, vision and audio configs);
    # config: github:sophgo/LLM-TPU@d581e7bf models/Qwen2_5_Omni/config/config.json (Qwen2.5-Omni-7B-AWQ)
    a = resolve("Qwen/Qwen2.5-Omni-7B").arch
    assert (a.layers, a.kv_heads, a.head_dim, a.max_positions) == (28, 4, 128, 32768)
    assert a.quant is None  # the bf16 release; the AWQ sibling keeps its own quantization
    assert resolve("Qwen/Qwen2.5-Omni-7B-AWQ").arch.quant.method == "awq"
    # vision (32 x 1280, SwiGLU) + Whisper-style audio (32 x 1280) towers, both counted
    assert 1.2e9 < a.vision_params < 1.45e9 and "audio" in a.vision_note


def test_janus_language_config_gets_llama_defaults():
    # Janus-Pro-7B's language_config states only its depth, length and vocabulary; LlamaConfig's defaults
    # (transformers, filled by kvlint.catalog.nested_defaults) give the DeepSeek-LLM-7B geometry
    a = resolve("deepseek-ai/Janus-Pro-7B").arch
    assert (a.layers, a.hidden_size, a.kv_heads, a.head_dim, a.max_positions) == (30, 4096, 32, 128, 16384)
    assert a.params == pytest.approx(6.91e9, rel=0.01)  # the LLM; the towers are not stated in sizes


def test_moonvit_sizes_stated_as_vt_names_are_read_and_kept():
    # MoonViT (Kimi-K2.5 / K3 remote code) names its sizes vt_*: the Kimi-K2.5 release states vt_hidden_size
    # 1152, vt_intermediate_size 4304, vt_num_attention_heads 16, vt_num_hidden_layers 27 beside patch_size, a
    # K3-style tower 1024 / 4096 / 12 heads / 27 layers. They were dropped by compact and the tower priced as
    # "not counted" unless the model_type was kimi_k25 (whose class defaults then stood in for them).
    text = {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": 1024,
        "intermediate_size": 2048,
        "moe_intermediate_size": 256,
        "n_routed_experts": 4,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "first_k_dense_replace": 1,
        "num_attention_heads": 8,
        "num_key_value_heads": 8,
        "kv_lora_rank": 512,
        "q_lora_rank": None,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "num_hidden_layers": 4,
        "vocab_size": 1000,
        "max_position_embeddings": 4096,
    }
    vision = {
        "patch_size": 14,
        "vt_hidden_size": 1024,
        "vt_intermediate_size": 4096,
        "vt_num_attention_heads": 12,
        "vt_num_hidden_layers": 27,
    }
    config = {"architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3"}
    config |= {"text_config": text, "vision_config": vision}
    for cfg in (config, compact(config)):
        arch = parse_config(cfg, "x/kimi-vt", "test")
        assert (arch.vision_layers, arch.vision_hidden) == (27, 1024)
        assert arch.vision_params > 27 * 12 * 1024 * 1024 and "not counted" not in arch.vision_note
