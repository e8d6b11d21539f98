"""Keys a nested text config leaves out because they equal its class default, as transformers fills them.

A multimodal config.json (LlavaConfig and the like) stores its text model under `text_config`, and
transformers writes that sub-config as a diff against the text class's defaults (configuration_utils
`recursive_diff_dict`): a value equal to the class default is dropped. mistral-community/pixtral-12b's
text_config, for one, has no num_attention_heads because its 32 heads are MistralConfig's default. On load,
transformers builds the sub-config from its class with those defaults, and so does vLLM, which reads the
config through transformers. kvlint fills the same defaults, for the text families listed here, and only for
a nested text config (a top-level config.json states its geometry keys).

The same holds for a nested vision_config (the pixtral-12b copy states neither the tower's width nor
its depth): its class defaults are filled before the tower is sized.

Defaults: transformers 5.24.0 configuration_mistral.py (MistralConfig), configuration_llama.py
(LlamaConfig; its num_key_value_heads default None means one KV head per query head, which the parser
already reads from a missing key) and configuration_pixtral.py (PixtralVisionConfig). LlavaConfig's
text_config is a LlamaConfig when it names no model_type.
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog.keep_keys import TEXT_KEYS

_MISTRAL = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_act": "silu",
    "max_position_embeddings": 4096 * 32,
    "tie_word_embeddings": False,
    "sliding_window": 4096,
}
_LLAMA = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "hidden_act": "silu",
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
}
TEXT_DEFAULTS = {"mistral": _MISTRAL, "llama": _LLAMA}
_PIXTRAL_VISION = {
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_channels": 3,
    "image_size": 1024,
    "patch_size": 16,
}
# transformers Qwen2VLVisionConfig (configuration_qwen2_vl.py): configs saved by transformers >= 4.46 keep only
# in_chans / spatial_patch_size (and hidden_size when it is not 3584) in their vision_config
_QWEN2_VL_VISION = {
    "depth": 32,
    "embed_dim": 1280,
    "hidden_size": 3584,
    "mlp_ratio": 4,
    "num_heads": 16,
    "in_channels": 3,
    "patch_size": 14,
    "spatial_merge_size": 2,
}
VISION_DEFAULTS = {"pixtral": _PIXTRAL_VISION, "qwen2_vl": _QWEN2_VL_VISION}
# Kimi-K2.5 (model_type kimi_k25; its vision_config often states only patch_size): the MoonViT tower of
# KimiK25VisionConfig's defaults (sglang 0.5.23 configs/kimi_k25.py:36-57, which KimiK25Config builds from
# the dict: 27 layers x 1152, MLP 4304, 16 heads, a patch-merger projector to the 7168-wide text model)
_KIMI_K25_VISION = {
    "num_hidden_layers": 27,
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "num_attention_heads": 16,
    "patch_size": 14,
}
# keyed by the top-level model_type, for vision configs that name no model_type of their own
VISION_DEFAULTS_BY_MODEL = {"kimi_k25": _KIMI_K25_VISION}


def nested_text(config: dict[str, Any]) -> bool:
    """Whether the config nests its text model (text_config / llm_config / ...) rather than stating it at the top."""
    return any(isinstance(config.get(k), dict) and config.get(k) for k in TEXT_KEYS)


def with_text_defaults(config: dict[str, Any], text: dict[str, Any], family: str) -> dict[str, Any]:
    """The text config with the keys its class default supplies filled in, when it came nested."""
    defaults = TEXT_DEFAULTS.get(family)
    if defaults is None or not nested_text(config):
        return text
    missing = {k: v for k, v in defaults.items() if k not in text}
    return {**text, **missing} if missing else text


# MoonViT configs (Kimi-K2.5 / K2.6 / K3 remote code, KimiK25VisionConfig) name the tower's sizes vt_*:
# the Kimi-K2.5 release states vt_hidden_size 1152, vt_intermediate_size 4304, vt_num_attention_heads 16,
# vt_num_hidden_layers 27 beside patch_size; read them under the names every other tower uses
VT_NAMES = {
    "vt_hidden_size": "hidden_size",
    "vt_intermediate_size": "intermediate_size",
    "vt_num_attention_heads": "num_attention_heads",
    "vt_num_hidden_layers": "num_hidden_layers",
}


def with_vision_defaults(config: dict[str, Any]) -> dict[str, Any]:
    """The config with its nested vision_config's class defaults filled in, for the vision families listed
    (by the vision_config's model_type, else by the model's); sizes stated as vt_* are read first."""
    vision = config.get("vision_config")
    if not isinstance(vision, dict):
        return config
    stated = {VT_NAMES[k]: v for k, v in vision.items() if k in VT_NAMES and VT_NAMES[k] not in vision}
    if stated:
        vision = {**vision, **stated}
        config = {**config, "vision_config": vision}
    defaults = VISION_DEFAULTS.get(str(vision.get("model_type") or "")) or VISION_DEFAULTS_BY_MODEL.get(
        str(config.get("model_type") or "")
    )
    if not defaults:
        return config
    missing = {k: v for k, v in defaults.items() if k not in vision}
    return {**config, "vision_config": {**vision, **missing}} if missing else config
