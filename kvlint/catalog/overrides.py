"""Engine options that change the model's config before the engine reads it: vLLM `--hf-overrides`
(and the older `--rope-scaling` / `--rope-theta`), SGLang `--json-model-override-args`, TGI
`--rope-scaling` / `--rope-factor`. Applied to the config kvlint parsed, so the derived maximum
length (KV204), the RoPE cache and every capacity figure use the model the engine really runs.

vLLM applies hf_overrides with `config.update(...)` on the Hugging Face config (vllm/config/model.py);
for a model whose text settings sit in `text_config`, kvlint applies each key there too when the
text config has it or the top level does not (vLLM reads the text config for lengths).
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog.arch import ModelArch
from kvlint.catalog.hf_config import ConfigError, parse_config


def _merge(base: dict[str, Any], add: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in add.items():
        if (
            isinstance(value, dict)
            and isinstance(out.get(key), dict)
            and key not in ("rope_scaling", "rope_parameters")
        ):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value  # rope_scaling is replaced whole, as config.update does
    return out


def apply(arch: ModelArch, overrides: dict[str, Any], how: str) -> tuple[ModelArch | None, str]:
    """(the model with the overrides applied, '') or (None, why they could not be applied)."""
    if arch.parsed_from is None:
        return None, "the model's config is not available to apply them to"
    config, model_id, source, hf_quant, ckpt, ckpt_source = arch.parsed_from
    merged = _merge(config, overrides)
    text = config.get("text_config")
    if isinstance(text, dict):
        text_keys = {k: v for k, v in overrides.items() if k in text or k not in config}
        merged["text_config"] = _merge(text, text_keys)
    try:
        out = parse_config(merged, model_id, f"{source} + {how}", hf_quant, ckpt, ckpt_source)
    except (ConfigError, ValueError, TypeError, ArithmeticError) as exc:
        return None, f"the overridden config cannot be read: {exc}"
    from kvlint.record import replace

    if (out.max_positions, out.max_positions_note) == (arch.max_positions, arch.max_positions_note):
        return out, ""
    return replace(out, max_positions_note=f"{out.max_positions_note} ({how})"), ""
