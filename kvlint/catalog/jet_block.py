"""Jet-Nemotron's JetBlock: a linear-attention layer with a dynamic short convolution and a fixed state.

Read as the maker's model code builds it (github:NVlabs/Jet-Nemotron@94cbd12404637950722a09f70c8649ff1b1f2793,
jetai/modeling/hf/jet_block.py JetBlock and dynamic_conv.py DynamicShortConvolution), from the config's
`efficient_attention_config["jet"]` (num_heads, head_dim, expand_v, conv_size, dconv_generator_reduction):
- weights: q_proj / k_proj hidden -> heads x head_dim, v_proj and g_proj hidden -> value_dim (= key_dim x
  expand_v), a_proj / b_proj hidden -> heads, A_log and dt_bias (one per head), the kernel generator of the
  dynamic convolution (w1 hidden -> value_dim // reduction, no bias; w2 -> value_dim x conv_size, with bias),
  o_norm over one value head, o_proj value_dim -> hidden. No attention weights besides these.
- state per running sequence, as SGLang sizes it (python/sglang/srt/configs/jet_nemotron.py @0fc1a4fb:
  Mamba2StateShape.create(intermediate_size=value_dim, n_groups=heads, num_heads=heads, head_dim=head_v_dim,
  state_size=head_dim, conv_kernel=conv_size)): a conv window of (value_dim + 2 x heads x head_dim) x
  (conv_size - 1) in the model dtype and a recurrent state of heads x head_v_dim x head_dim in float32
  (mamba2_state_dtype's default; a config's mamba_ssm_dtype overrides it).
"""

from __future__ import annotations

from typing import Any

_SSM_BYTES = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0}


def _jet(cfg: dict[str, Any]) -> dict[str, Any]:
    eff = cfg.get("efficient_attention_config")
    jet = eff.get("jet") if isinstance(eff, dict) else None
    if not isinstance(jet, dict):
        raise ValueError(
            "a jet layer needs efficient_attention_config.jet (its heads, head_dim, expand_v, conv_size)"
        )
    return jet


def _positive(jet: dict[str, Any], key: str, default: float | None = None) -> float:
    value = jet.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"efficient_attention_config.jet.{key} must be a positive number, not {value!r:.60}")
    return value


def jet_dims(cfg: dict[str, Any]) -> tuple[int, int, int, int, int]:
    """(heads, key head dim, value head dim, conv kernel, generator reduction) of a JetBlock."""
    jet = _jet(cfg)
    heads, head_dim = int(_positive(jet, "num_heads")), int(_positive(jet, "head_dim"))
    head_v = round(
        head_dim * _positive(jet, "expand_v")
    )  # JetBlock: int(head_dim * expand_v), checked integral
    kernel = int(_positive(jet, "conv_size", 4))
    reduction = int(_positive(jet, "dconv_generator_reduction", 1))
    return heads, head_dim, head_v, kernel, reduction


def jet_params(cfg: dict[str, Any], h: int) -> int:
    heads, dk, dv, kernel, reduction = jet_dims(cfg)
    key_dim, value_dim = heads * dk, heads * dv
    generator = (
        h * (value_dim // reduction) + (value_dim // reduction) * value_dim * kernel + value_dim * kernel
    )
    projections = 2 * h * key_dim + 2 * h * value_dim + 2 * h * heads  # q, k, v, g, a, b
    return projections + 2 * heads + generator + dv + value_dim * h  # A_log, dt_bias; o_norm; o_proj


def jet_state(cfg: dict[str, Any], dtype_bytes: float) -> int:
    heads, dk, dv, kernel, _ = jet_dims(cfg)
    ssm = _SSM_BYTES.get(str(cfg.get("mamba_ssm_dtype") or "float32").lower(), 4.0)
    conv_dim = heads * dv + 2 * heads * dk
    return int(conv_dim * (kernel - 1) * dtype_bytes + heads * dv * dk * ssm)
