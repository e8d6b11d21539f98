"""Config keys: how a config names its sizes and its longest context (which keys a compact catalog copy
keeps is kvlint.catalog.keep_keys, re-exported here).

The readings follow vLLM's, with the code they mirror named at each step:
- max_model_len: vllm/config/model.py `_get_and_verify_max_len`: the minimum over the length keys,
  scaled by rope_scaling unless the rope type already states the extended length.
- RoPE cache: vllm/model_executor/layers/rotary_embedding (one [max_position, rotary_dim] tensor).
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog.keep_keys import (  # noqa: F401  (re-exported: callers import them from here)
    HYBRID_KEYS,
    KEEP_KEYS,
    LENGTH_KEYS,
    QUANT_KEEP,
    TEXT_KEYS,
    VISION_KEEP,
    compact,
    compact_hf_quant,
)

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


def served_part(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a config the engines load: an Omni model's thinker (vLLM registers
    Qwen2_5OmniThinkerForConditionalGeneration and skips the talker and token2wav weights); else the
    config itself. The outer dtype and quantization apply to it."""
    thinker = config.get("thinker_config")
    if not isinstance(thinker, dict) or not thinker:
        return config
    merged = dict(thinker)
    for key in ("quantization_config", "compression_config", "torch_dtype", "dtype"):
        if key not in merged and key in config:
            merged[key] = config[key]
    return merged


def names_problem(config: dict[str, Any]) -> str:
    """Why the config's class names cannot be read ('' when they can): `architectures` must be a list of
    class names and `model_type` a name, at the top and in a nested text config (transformers and the
    engines index architectures[0] and look model_type up in their registries; anything else fails there)."""
    parts = [("", config)] + [(f"{k}.", config[k]) for k in TEXT_KEYS if isinstance(config.get(k), dict)]
    for where, part in parts:
        archs = part.get("architectures")
        if archs is not None and not (isinstance(archs, list) and all(isinstance(a, str) for a in archs)):
            return f"{where}architectures is {str(archs)[:60]!r}, not a list of class names"
        kind = part.get("model_type")
        if kind is not None and not isinstance(kind, str):
            return f"{where}model_type is {str(kind)[:60]!r}, not a name"
    return ""


def text_part(config: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The text model's config (multimodal configs nest it under one of TEXT_KEYS) and its family."""
    arch_names = config.get("architectures") or []
    outer = config.get("model_type") or (ARCH_FAMILY.get(arch_names[0]) if arch_names else None) or ""
    text = next((config[k] for k in TEXT_KEYS if isinstance(config.get(k), dict) and config[k]), None)
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


def config_max_len(cfg: dict[str, Any]) -> int:
    """The smallest of the config's length keys as written, no RoPE scaling applied (0: none)."""
    found = [int(cfg[k]) for k in LENGTH_KEYS if isinstance(cfg.get(k), (int, float)) and cfg[k] > 0]
    return min(found) if found else 0


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
# vLLM adapt_config_dict (vllm/transformers_utils/configs/mistral.py @01da88c5): MLA keys keep their names;
# a MoE with shared experts (Mistral Large 3) becomes model_type deepseek_v3 through _remap_moe_args
_MISTRAL_MLA = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
_MISTRAL_LARGE3_MOE = {
    "num_experts": "n_routed_experts",
    "num_experts_per_tok": "num_experts_per_tok",
    "expert_hidden_dim": "moe_intermediate_size",
    "num_shared_experts": "n_shared_experts",
    "first_k_dense_replace": "first_k_dense_replace",
    "route_every_n": "moe_layer_freq",
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
    if params.get("qk_nope_head_dim"):  # MLA (Mistral Large 3): the DeepSeek key names, as vLLM keeps them
        config.update({k: params[k] for k in _MISTRAL_MLA if params.get(k) is not None})
    # vLLM: Mistral Large 3 (shared experts) is served as DeepSeek-V3; a count of the wrong type goes that way
    # too and is refused there by name (bounds: n_shared_experts), never compared here
    if moe and moe.get("num_shared_experts") not in (None, 0, False):
        config["model_type"], config["architectures"] = "deepseek_v3", ["MistralLarge3ForCausalLM"]
        config.update({new: moe[old] for old, new in _MISTRAL_LARGE3_MOE.items() if moe.get(old) is not None})
    elif moe:
        config["num_local_experts"] = moe.get("num_experts")
        config["num_experts_per_tok"] = moe.get("num_experts_per_tok")
    quant = params.get("quantization_config")
    # a compressed-tensors block passes through (vLLM _remap_mistral_quantization_args)
    if isinstance(quant, dict):
        config["quantization_config"] = quant
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
