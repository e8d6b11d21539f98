"""Config keys: which a compact catalog copy keeps, how a config names its sizes and its longest context.

The readings follow vLLM's, with the code they mirror named at each step:
- max_model_len: vllm/config/model.py `_get_and_verify_max_len`: the minimum over the length keys,
  scaled by rope_scaling unless the rope type already states the extended length.
- RoPE cache: vllm/model_executor/layers/rotary_embedding (one [max_position, rotary_dim] tensor).
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
        "attention_bias",
        "qkv_bias",
        "mlp_bias",
        "bias",
        "num_kv_shared_layers",
        "text_config",
        "llm_config",
        "vision_config",
        "audio_config",
        "word_embed_proj_dim",
        "partial_rotary_factor",
        "original_max_position_embeddings",
        "parallel_attn",
        "alibi",
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

# Families named by the architecture when a config has no model_type.
ARCH_FAMILY = {
    "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3",
    "Gemma2ForCausalLM": "gemma2",
    "GemmaForCausalLM": "gemma",
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "Phi3ForCausalLM": "phi3",
    "FalconForCausalLM": "falcon",
    "OPTForCausalLM": "opt",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "DeepseekV2ForCausalLM": "deepseek_v2",
}


class ConfigError(ValueError):
    """The config lacks a fact kvlint needs; the message names the key."""


def _compact_quant(value: dict[str, Any]) -> dict[str, Any]:
    value = {k: v for k, v in value.items() if k in QUANT_KEEP}
    if isinstance(value.get("config_groups"), dict):
        value["config_groups"] = {
            g: {k: v for k, v in body.items() if k in _GROUP_KEEP}
            for g, body in value["config_groups"].items()
            if isinstance(body, dict)
        }
    return value


def compact(config: dict[str, Any]) -> dict[str, Any]:
    """The subset of a config.json that kvlint reads (what the shipped catalog stores)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key not in KEEP_KEYS:
            continue
        if key in ("text_config", "llm_config") and isinstance(value, dict):
            value = compact(value)
        elif key in ("vision_config", "audio_config") and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k in VISION_KEEP}
        elif key in ("attn_config", "ffn_config") and isinstance(value, dict):
            value = compact_nested(value)
        elif key in ("quantization_config", "compression_config") and isinstance(value, dict):
            value = _compact_quant(value)
        out[key] = value
    return out


def compact_hf_quant(hf_quant: dict[str, Any]) -> dict[str, Any]:
    """The part of a ModelOpt hf_quant_config.json that kvlint reads (per-layer tables dropped)."""
    q = hf_quant.get("quantization")
    if not isinstance(q, dict):
        return {}
    keep = ("quant_algo", "kv_cache_quant_algo", "group_size", "exclude_modules")
    return {"quantization": {k: q[k] for k in keep if k in q}}


def first(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    """The value of the first key the config states (not None)."""
    for key in keys:
        value = cfg.get(key)
        if value is not None:
            return value
    return default


def need(cfg: dict[str, Any], *keys: str) -> int:
    """A positive count the config must state under one of `keys`; ConfigError naming them if not."""
    value = first(cfg, *keys)
    if value is None:
        raise ConfigError(f"config has no {' / '.join(keys)}")
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not value > 0
        or value == float("inf")
    ):
        raise ConfigError(f"config {keys[0]} is {value!r}, expected a positive number")
    return int(value)


def text_part(config: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The text model's config (multimodal configs nest it under text_config or llm_config) and its family."""
    arch_names = config.get("architectures") or []
    outer = config.get("model_type") or (ARCH_FAMILY.get(arch_names[0]) if arch_names else None) or ""
    text = config.get("text_config")
    if not isinstance(text, dict) or not text:
        text = config.get("llm_config")  # InternVL-style multimodal configs
    if isinstance(text, dict) and text:
        merged = dict(text)
        for key in ("quantization_config", "compression_config", "tie_word_embeddings"):
            if key not in merged and key in config:
                merged[key] = config[key]
        if "torch_dtype" not in merged and "dtype" not in merged:
            merged["torch_dtype"] = config.get("torch_dtype") or config.get("dtype")
        family = merged.get("model_type") or outer
        return merged, family
    return config, outer


def _rope(cfg: dict[str, Any]) -> tuple[dict[str, Any], str, Any]:
    """(rope_scaling dict, its type, its factor); an absent or malformed entry reads as empty."""
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    if not isinstance(rope, dict):
        return {}, "", None
    return rope, rope.get("rope_type") or rope.get("type") or "", rope.get("factor")


def _yarn_len(
    rope: dict[str, Any], cfg: dict[str, Any], value: int, note: str, factor: Any
) -> tuple[int, str]:
    original = rope.get("original_max_position_embeddings") or cfg.get("original_max_position_embeddings")
    if isinstance(original, (int, float)):
        return (
            int(original * factor),
            f"rope_scaling yarn original_max_position_embeddings={int(original):,} x factor {factor}",
        )
    return int(value * factor), note + f" x yarn factor {factor}"


def derive_max_len(cfg: dict[str, Any], family: str) -> tuple[int, str]:
    """vLLM `_get_and_verify_max_len`: min over the length keys, rope-scaled where the type says so."""
    found = [(cfg[k], k) for k in LENGTH_KEYS if isinstance(cfg.get(k), (int, float)) and cfg[k] > 0]
    if not found:
        return 2048, "no length key in config; vLLM falls back to 2048"
    value, key = min(found)
    value = int(value)
    note = f"{key}={value:,}"
    rope, rtype, factor = _rope(cfg)
    # vLLM: Gemma 3's max_position_embeddings already includes the scaling (skip it); su/longrope/
    # llama3 state the extended length already; yarn uses original_max_position_embeddings * factor.
    if (
        not isinstance(factor, (int, float))
        or rtype in ("su", "longrope", "llama3", "mrope", "default")
        or "gemma3" in family
    ):
        return value, note
    if rtype == "yarn":
        return _yarn_len(rope, cfg, value, note, factor)
    return int(value * factor), note + f" x rope_scaling {rtype or 'factor'} {factor}"


def rope_cache_elems(cfg: dict[str, Any], family: str, head_dim: int) -> int:
    """Elements of the RoPE cos/sin cache vLLM builds once per GPU (vllm/model_executor/layers/
    rotary_embedding: a [max_position, rotary_dim] tensor in the model dtype). Its length is
    max_position_embeddings, times the factor for linear/dynamic scaling, original x factor for
    YaRN; MLA rotates only qk_rope_head_dim; Gemma 3 keeps a second, unscaled cache for its
    local layers."""
    max_pos = int(cfg.get("max_position_embeddings") or cfg.get("n_positions") or 2048)
    rope, rtype, factor = _rope(cfg)
    positions = max_pos
    if isinstance(factor, (int, float)):
        if rtype in ("linear", "dynamic"):
            positions = int(max_pos * factor)
        elif rtype == "yarn":
            original = (
                rope.get("original_max_position_embeddings")
                or cfg.get("original_max_position_embeddings")
                or max_pos
            )
            positions = int(original * factor)
    if cfg.get("kv_lora_rank"):
        rotary = int(cfg.get("qk_rope_head_dim") or 64)
    else:
        rotary = int(head_dim * float(cfg.get("partial_rotary_factor") or 1.0))
    elems = positions * rotary
    if family in ("gemma3", "gemma3_text"):
        elems += max_pos * rotary  # the local layers' cache (rope_local_base_freq, no scaling)
    return elems


def dtype_of(cfg: dict[str, Any]) -> str:
    """The checkpoint's torch_dtype, spelled as torch spells it."""
    dtype = str(first(cfg, "torch_dtype", "dtype", default="bfloat16"))
    return {"float": "float32", "half": "float16", "bf16": "bfloat16", "fp16": "float16"}.get(dtype, dtype)


# Mistral's own checkpoint format (params.json, read by vLLM's MistralConfigParser / mistral-inference):
# its keys -> the Hugging Face config keys kvlint reads.
_MISTRAL_KEYS = {
    "dim": "hidden_size",
    "n_layers": "num_hidden_layers",
    "n_heads": "num_attention_heads",
    "n_kv_heads": "num_key_value_heads",
    "head_dim": "head_dim",
    "hidden_dim": "intermediate_size",
    "vocab_size": "vocab_size",
    "sliding_window": "sliding_window",
    "max_seq_len": "max_position_embeddings",
    "max_position_embeddings": "max_position_embeddings",
    "tied_embeddings": "tie_word_embeddings",
}


def from_mistral_params(params: dict[str, Any]) -> dict[str, Any]:
    """A config.json-shaped dict from a Mistral-format params.json (dense, MoE, and its vision encoder)."""
    if not isinstance(params, dict):
        raise ConfigError("params.json is not a JSON object")
    moe = params.get("moe") if isinstance(params.get("moe"), dict) else {}
    config: dict[str, Any] = {"model_type": "mixtral" if moe else "mistral", "torch_dtype": "bfloat16"}
    for key, target in _MISTRAL_KEYS.items():
        if params.get(key) is not None:
            config[target] = params[key]
    if moe:
        config["num_local_experts"] = moe.get("num_experts")
        config["num_experts_per_tok"] = moe.get("num_experts_per_tok")
    vision = params.get("vision_encoder")
    if isinstance(vision, dict):
        config["vision_config"] = {
            "hidden_size": vision.get("hidden_size"),
            "num_hidden_layers": vision.get("num_hidden_layers"),
            "intermediate_size": vision.get("intermediate_size"),
            "patch_size": vision.get("patch_size"),
            "image_size": vision.get("image_size"),
            "num_channels": vision.get("num_channels"),
        }
    return config
