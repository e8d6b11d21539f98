"""The keys of a config.json that kvlint keeps in its compact catalog copy (everything else is dropped).

Split from hf_keys: `compact` (a config.json -> the subset kvlint reads, as the shipped catalog and
`kvlint models pull` store it) and the key lists it keeps, text model, vision tower and quantization.
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog.native_keys import NATIVE_KEYS, compact_nested

# The keys under which configs state the longest context (derive_max_len takes the smallest given).
LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)

# hybrid decoders (kvlint.catalog.hybrid): layer patterns, Mamba / linear-attention sizes
_HYBRID_KEY_TEXT = """
    hybrid_override_pattern layers_block_type full_attention_interval attn_layer_period
    attn_layer_offset expert_layer_period expert_layer_offset attn_type_list attn_output_gate
    mamba_num_heads mamba_n_heads mamba_head_dim mamba_d_head mamba_d_ssm mamba_expand expand
    n_groups mamba_n_groups ssm_state_size mamba_d_state conv_kernel mamba_d_conv mamba_dt_rank
    mamba_proj_bias use_bias use_conv_bias mamba_ssm_cache_dtype mamba_ssm_dtype
    moe_shared_expert_intermediate_size moe_latent_size linear_num_key_heads linear_key_head_dim
    linear_num_value_heads linear_value_head_dim linear_conv_kernel_dim
"""
HYBRID_KEYS = tuple(_HYBRID_KEY_TEXT.split())

# The keys kvlint keeps from a config.json in its compact catalog (everything else is dropped).
KEEP_KEYS = frozenset(
    {
        "architectures",
        "model_type",
        "num_hidden_layers",
        "n_layer",
        "num_layers",
        "hidden_size",
        "n_embd",
        "n_embed",
        "d_model",
        "intermediate_size",
        "ff_intermediate_size",
        "ffn_hidden_size",
        "ffn_dim",
        "kv_channels",
        "add_qkv_bias",
        "n_inner",
        "moe_intermediate_size",
        "shared_expert_intermediate_size",
        "intermediate_size_mlp",
        "num_attention_heads",
        "n_head",
        "num_key_value_heads",
        "n_head_kv",
        "num_kv_heads",
        "multi_query_group_num",
        "multi_query",
        "new_decoder_architecture",
        "head_dim",
        "hidden_size_per_head",
        "vocab_size",
        "padded_vocab_size",
        *LENGTH_KEYS,
        "rope_scaling",
        "rope_parameters",
        "sliding_window",
        "use_sliding_window",
        "max_window_layers",
        "layer_types",
        "sliding_window_pattern",
        "attention_chunk_size",
        "no_rope_layers",
        "nope_layer_interval",
        "tie_word_embeddings",
        "num_labels",  # a classification head's classes (compact turns id2label into it)
        "id2label",
        "torch_dtype",
        "dtype",
        "quantization_config",
        "compression_config",
        "num_local_experts",
        "num_experts",
        "n_routed_experts",
        "n_shared_experts",
        "num_experts_per_tok",
        "experts_per_token",
        "first_k_dense_replace",
        "moe_layer_freq",
        "decoder_sparse_step",
        "mlp_only_layers",
        "interleave_moe_layer_step",
        "kv_lora_rank",
        "q_lora_rank",
        "qk_nope_head_dim",
        "qk_rope_head_dim",
        "v_head_dim",
        "num_nextn_predict_layers",
        # DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the lightning indexer's keys and, from
        # IndexCache configs on, which layers build one (vllm deepseek_v2.py DeepseekV2MLAAttention)
        "index_topk",
        "index_head_dim",
        "index_n_heads",
        "index_topk_freq",
        "index_skip_topk_offset",
        "index_topk_pattern",
        "attention_bias",
        "qkv_bias",
        "mlp_bias",
        "bias",
        "num_kv_shared_layers",
        "text_config",
        "llm_config",
        "language_config",  # DeepSeek-VL2 / Janus: the language model's config
        "thinker_config",  # Qwen2.5-Omni: the part the engines serve (text, vision and audio configs)
        "vision_config",
        "visual",  # Qwen-VL (1.0): its ViT and resampler, in its own key names
        "downsample_ratio",  # InternVL: the pixel shuffle that sizes its projector mlp1
        "audio_config",
        "audio_processor",  # Phi-4-multimodal: its conformer audio encoder (kvlint.catalog.conformer)
        "embd_layer",  # Phi-4-multimodal: the audio projection's and the image embedding's kinds
        "cross_attention_layers",  # mllama: decoder layers attending to the image tokens
        "word_embed_proj_dim",
        "partial_rotary_factor",
        "original_max_position_embeddings",
        "parallel_attn",
        "alibi",
        "block_configs",  # Nemotron-NAS (DeciLM): one attention / FFN config per layer (kvlint.catalog.blocks)
        *HYBRID_KEYS,
        *NATIVE_KEYS,
    }
)
VISION_KEEP = frozenset(
    {
        "model_type",
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "depth",
        "num_attention_heads",
        "patch_size",
        "image_size",
        "num_channels",
        "in_chans",
        "projector_input_dim",
        "projector_output_dim",
        "vision_output_dim",
        "out_hidden_size",
        "spatial_merge_size",
        "embed_dim",
        "mlp_ratio",
        "deepstack_visual_indexes",  # Qwen3-VL: one more PatchMerger per listed layer
        "max_num_tiles",  # mllama: tiles per image, each a full set of patch tokens
        "vt_hidden_size",  # MoonViT (Kimi-K2.5 / K3): the tower's sizes under vt_* names (nested_defaults.VT_NAMES)
        "vt_intermediate_size",
        "vt_num_attention_heads",
        "vt_num_hidden_layers",
        "qkv_bias",  # InternViT: layer shapes (defaults are the 6B tower's)
        "qk_normalization",
        "norm_type",
        "num_global_layers",
        "supported_aspect_ratios",
        "width",  # Qwen-VL `visual`
        "layers",
        "output_dim",
        "d_model",  # Whisper-style audio encoders (Qwen2.5-Omni audio_config)
        "encoder_layers",
        "encoder_ffn_dim",
        "num_mel_bins",
    }
)
QUANT_KEEP = frozenset(
    {
        "quant_method",
        "bits",
        "group_size",
        "zero_point",
        "sym",
        "desc_act",
        "version",
        "fmt",
        "activation_scheme",
        "weight_block_size",
        "modules_to_not_convert",
        "ignore",
        "format",
        "config_groups",
        "kv_cache_scheme",
        "load_in_4bit",
        "load_in_8bit",
        "bnb_4bit_quant_type",
        "bnb_4bit_use_double_quant",
        "quant_algo",
        "kv_cache_quant_algo",
        "exclude_modules",
        "quantization_status",
        "weight_dtype",
    }
)
_GROUP_KEEP = ("weights", "input_activations", "targets")


def _compact_quant(value: dict[str, Any]) -> dict[str, Any]:
    value = {k: v for k, v in value.items() if k in QUANT_KEEP}
    if isinstance(value.get("config_groups"), dict):
        value["config_groups"] = {
            g: {k: v for k, v in body.items() if k in _GROUP_KEEP}
            for g, body in value["config_groups"].items()
            if isinstance(body, dict)
        }
    return value


# Where a multimodal config.json nests its language model, in the order they are looked for: transformers'
# text_config (Llava, Qwen2-VL, mllama, Gemma 3 ...), InternVL's llm_config, DeepSeek-VL2's / Janus's
# language_config.
TEXT_KEYS = ("text_config", "llm_config", "language_config")

# The one activation the tower arithmetic reads: silu means a gated (SwiGLU) MLP (Qwen2.5-VL, Pixtral);
# other values are not kept, so copies that differ only in them compact to the same arch.
_GATED_TOWER = ("hidden_act", "silu")


def _has_score_head(config: dict[str, Any]) -> bool:
    """A sequence-classification / reward model (its config's first architecture says so)."""
    names = config.get("architectures")
    name = names[0] if isinstance(names, list) and names and isinstance(names[0], str) else ""
    return name.endswith(("ForSequenceClassification", "RewardModel"))


_CONFORMER_KEEP = frozenset(
    {
        "attention_dim",
        "attention_heads",
        "linear_units",
        "num_blocks",
        "kernel_size",
        "ext_pw_out_channel",
        "depthwise_seperable_out_channel",
        "depthwise_multiplier",
        "nemo_conv_settings",
        "time_reduction",
        "input_size",
        "relative_attention_bias_args",
    }
)


def _compact_audio(key: str, value: dict[str, Any]) -> dict[str, Any]:
    """Phi-4-multimodal's encoder blocks: the conformer's sizes, the audio projection's kind and the image
    embedding's kind and crop size (kvlint.catalog.conformer)."""
    if key == "embd_layer":
        out: dict[str, Any] = {}
        audio, image = value.get("audio_embd_layer"), value.get("image_embd_layer")
        if isinstance(audio, dict):
            out["audio_embd_layer"] = {"projection_cls": audio.get("projection_cls")}
        if isinstance(image, dict):
            out["image_embd_layer"] = {k: image[k] for k in ("embedding_cls", "crop_size") if k in image}
        return out
    inner = value.get("config")
    return (
        {"config": {k: v for k, v in inner.items() if k in _CONFORMER_KEEP}}
        if isinstance(inner, dict)
        else {}
    )


def compact(config: dict[str, Any]) -> dict[str, Any]:
    """The subset of a config.json that kvlint reads (what the shipped catalog stores)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key not in KEEP_KEYS:
            continue
        if key in ("id2label", "num_labels"):
            if _has_score_head(config):  # only a score head's class count matters (id2label's size)
                out["num_labels"] = len(value) if isinstance(value, dict) else value
            continue
        if (key in TEXT_KEYS or key == "thinker_config") and isinstance(value, dict):
            value = compact(value)
        elif key in ("vision_config", "visual", "audio_config") and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k in VISION_KEEP or (k, v) == _GATED_TOWER}
        elif key in ("audio_processor", "embd_layer") and isinstance(value, dict):
            value = _compact_audio(key, value)
            if not value:  # Phi-3-vision's embd_layer states no audio projection
                continue
        elif key in ("attn_config", "ffn_config") and isinstance(value, dict):
            value = compact_nested(value)
        elif key in ("quantization_config", "compression_config") and isinstance(value, dict):
            value = _compact_quant(value)
        elif key == "block_configs" and isinstance(value, list):
            from kvlint.catalog.blocks import compact_blocks  # Nemotron-NAS only

            value = compact_blocks(value)
        out[key] = value
    return out


def compact_hf_quant(hf_quant: dict[str, Any]) -> dict[str, Any]:
    """The part of a ModelOpt hf_quant_config.json that kvlint reads (per-layer tables dropped)."""
    q = hf_quant.get("quantization")
    if not isinstance(q, dict):
        return {}
    keep = ("quant_algo", "kv_cache_quant_algo", "group_size", "exclude_modules")
    return {"quantization": {k: q[k] for k in keep if k in q}}
