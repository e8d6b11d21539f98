"""Hybrid decoders: which layers mix tokens with attention and which with a fixed-size state.

Mamba (SSM) and linear-attention layers (Gated DeltaNet, lightning attention) keep no growing KV
cache: each running sequence holds one fixed state per layer (a convolution window plus the
recurrent state), whatever its length. Only the attention layers' KV grows with the context.

The layer patterns are read as the model code reads them:
- Nemotron-H (`nemotron_h`): `hybrid_override_pattern`, one character per layer: `M` Mamba-2,
  `*` attention, `-` MLP, `E` MoE (transformers NemotronHConfig; newer configs spell it as
  `layers_block_type`: mamba / attention / mlp / moe). Every Nemotron-H layer is ONE of these.
- Qwen3-Next / Qwen3.5 (`qwen3_next`, `qwen3_5*`): `layer_types`, else every
  `full_attention_interval`-th layer (default 4) is full attention, the others Gated DeltaNet.
- Jamba (`jamba`): layer i is attention when i % attn_layer_period == attn_layer_offset.
- GraniteMoeHybrid (`granitemoehybrid`): `layer_types` / `layers_block_type` (mamba / attention).
- MiniMax-Text-01 / M1: `attn_type_list` (0 lightning attention, 1 softmax attention).
- Kimi Linear / Kimi-K3 (`kimi_linear`): `linear_attn_config.kda_layers` are Kimi Delta Attention,
  `full_attn_layers` MLA, both numbered from 1 (vLLM KimiLinearConfig.is_kda_layer tests layer_idx + 1).
- Falcon-H1 (`falcon_h1`): every layer runs attention and a Mamba-2 mixer side by side (vLLM
  falcon_h1.py FalconH1ParallelHybrid: `self_attn` and `mamba` on the same input), so every layer holds
  both a KV cache and a Mamba-2 state.
- Jet-Nemotron (`jet_nemotron`): `layer_types` `jet` (a JetBlock: linear attention with a fixed state,
  kvlint.catalog.jet_block), `attn` and `swa`; SGLang, which serves it, keeps full KV for both `attn` and
  `swa` layers (configs/jet_nemotron.py full_attention_layer_ids), so kvlint prices `swa` as attention too.
- Hunyuan cross-layer attention (`use_cla`, `cla_share_factor` f): layer i computes K and V only when
  i % f == 0; the f - 1 layers after it attend with that layer's K and V and have only q_proj and o_proj
  (vllm/model_executor/models/hunyuan_v1.py @00f8d445: HunYuanDecoderLayer picks HunYuanCrossAttention
  for `layer_id % cla_factor != 0`, HunYuanModel.forward passes the previous layer's (k, v) on). Those
  layers hold no KV of their own and no state.

State sizes follow vLLM's MambaSpec shapes (vllm/model_executor/layers/mamba/mamba_utils.py,
MambaStateShapeCalculator): Mamba-2 conv (conv_dim x (kernel - 1)) + SSM (heads x head_dim x
d_state); Mamba-1 conv (inner x (kernel - 1)) + SSM (inner x d_state); Gated DeltaNet conv
(conv_dim x (kernel - 1)) + recurrent (value heads x key head dim x value head dim).
"""

from __future__ import annotations

import math
from typing import Any

from kvlint.catalog.arch import FULL, NONE
from kvlint.catalog.hf_keys import first
from kvlint.catalog.jet_block import jet_params, jet_state

ATTENTION = "attention"
MAMBA2 = "mamba2"
MAMBA1 = "mamba1"
DELTANET = "gated_deltanet"
KDA = "kimi_delta_attention"
LIGHTNING = "lightning"
MLP_ONLY = "mlp"  # Nemotron-H `-`: a layer with only an MLP
MOE_ONLY = "moe"  # Nemotron-H `E`: a layer with only a mixture of experts
PARALLEL = "attention+mamba2"  # Falcon-H1: attention and Mamba-2 side by side in one layer
CROSS_LAYER = "cross_layer_attention"  # Hunyuan CLA: attends with the previous layer's K and V
JET = "jet_block"  # Jet-Nemotron's JetBlock linear attention
STATEFUL = (MAMBA2, MAMBA1, DELTANET, LIGHTNING, KDA, PARALLEL, JET)

_PATTERN_CHAR = {"M": MAMBA2, "*": ATTENTION, "-": MLP_ONLY, "E": MOE_ONLY}
_BLOCK_NAME = {
    "mamba": MAMBA2,
    "mamba2": MAMBA2,
    "attention": ATTENTION,
    "full_attention": ATTENTION,
    "mlp": MLP_ONLY,
    "moe": MOE_ONLY,
    "linear_attention": DELTANET,
}
_DELTANET_FAMILIES = ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text")
_MINIMAX = ("minimax", "minimax_m1", "minimax_text_01")
_JET_NAME = {"jet": JET, "attn": ATTENTION, "swa": ATTENTION}


def _from_names(names: Any, layers: int, table: dict[str, str]) -> tuple[str, ...] | None:
    if isinstance(names, str) and len(names) == layers and all(c in table for c in names):
        return tuple(table[c] for c in names)
    if isinstance(names, list) and len(names) == layers and all(str(n) in table for n in names):
        return tuple(table[str(n)] for n in names)
    return None


def mixers(cfg: dict[str, Any], family: str, layers: int) -> tuple[str, ...] | None:
    """The token mixer of every layer of a hybrid decoder, or None for an all-attention model."""
    by_family = _BY_FAMILY.get(family)
    if by_family is not None:
        return by_family(cfg, layers)
    for reader in (_kimi_linear, _cross_layer, _minimax):  # the first that reads the config
        found = reader(cfg, family, layers)
        if found is not None:
            return found
    return None


def _nemotron_h(cfg: dict[str, Any], layers: int) -> tuple[str, ...] | None:
    return _from_names(cfg.get("hybrid_override_pattern"), layers, _PATTERN_CHAR) or _from_names(
        cfg.get("layers_block_type"), layers, _BLOCK_NAME
    )


def _jet_nemotron(cfg: dict[str, Any], layers: int) -> tuple[str, ...]:
    jet = _from_names(cfg.get("layer_types"), layers, _JET_NAME)
    if jet is None:
        shown = f"{cfg.get('layer_types')!r:.60}"
        raise ValueError(
            f"layer_types must name jet / attn / swa for each of the {layers} layers, not {shown}"
        )
    return jet


def _granite(cfg: dict[str, Any], layers: int) -> tuple[str, ...] | None:
    return _from_names(cfg.get("layer_types") or cfg.get("layers_block_type"), layers, _BLOCK_NAME)


def _gated_deltanet(cfg: dict[str, Any], layers: int) -> tuple[str, ...]:
    by_type = _from_names(cfg.get("layer_types"), layers, _BLOCK_NAME)
    if by_type:
        return by_type
    step = int(cfg.get("full_attention_interval") or 4)
    return tuple(ATTENTION if (i + 1) % step == 0 else DELTANET for i in range(layers))


def _jamba(cfg: dict[str, Any], layers: int) -> tuple[str, ...]:
    period = int(cfg.get("attn_layer_period") or 8)
    offset = int(cfg.get("attn_layer_offset") or 4)
    return tuple(ATTENTION if i % period == offset else MAMBA1 for i in range(layers))


def _falcon_h1(cfg: dict[str, Any], layers: int) -> tuple[str, ...]:
    return (PARALLEL,) * layers


_BY_FAMILY = {
    "nemotron_h": _nemotron_h,
    "jet_nemotron": _jet_nemotron,
    "granitemoehybrid": _granite,
    **{f: _gated_deltanet for f in _DELTANET_FAMILIES},
    "jamba": _jamba,
    "falcon_h1": _falcon_h1,
}  # the families whose every config is read by one rule


def _kimi_linear(cfg: dict[str, Any], family: str, layers: int) -> tuple[str, ...] | None:
    linear = cfg.get("linear_attn_config")
    if family != "kimi_linear" or linear is None:
        return None
    listed = linear.get("kda_layers") if isinstance(linear, dict) else None
    if not isinstance(linear, dict) or not (
        listed is None
        or (isinstance(listed, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in listed))
    ):
        shown = f"linear_attn_config {linear!r:.60}" if listed is None else f"{listed!r:.60}"
        raise ValueError(f"linear_attn_config.kda_layers must list layer numbers, not {shown}")
    if listed is None:
        return None
    kda = set(listed)  # numbers no layer has match nothing, as in vLLM's is_kda_layer
    return tuple(KDA if i + 1 in kda else ATTENTION for i in range(layers))


def _cross_layer(cfg: dict[str, Any], family: str, layers: int) -> tuple[str, ...] | None:
    if not cfg.get("use_cla"):  # vLLM hunyuan_v1 _get_cla_factor: use_cla takes config.cla_share_factor as is
        return None
    share = cfg.get("cla_share_factor")
    if not isinstance(share, int) or isinstance(share, bool) or share < 1:
        raise ValueError(f"cla_share_factor must be a positive whole number with use_cla, not {share!r:.60}")
    if share > 1:
        return tuple(ATTENTION if i % share == 0 else CROSS_LAYER for i in range(layers))
    return None


def _minimax(cfg: dict[str, Any], family: str, layers: int) -> tuple[str, ...] | None:
    kinds = cfg.get("attn_type_list")
    if family in _MINIMAX and isinstance(kinds, list) and len(kinds) == layers:
        return tuple(ATTENTION if int(k) == 1 else LIGHTNING for k in kinds)
    return None


def kv_kinds(mix: tuple[str, ...]) -> tuple[str, ...]:
    """KV kind per layer: full attention where the mixer is attention, none elsewhere."""
    return tuple(FULL if m in (ATTENTION, PARALLEL) else NONE for m in mix)


# ---- Mamba-2 (Nemotron-H, GraniteMoeHybrid, Falcon-H1) ----


def _mamba2_dims(cfg: dict[str, Any], h: int) -> tuple[int, int, int, int, int, int]:
    """(heads, head_dim, groups, d_state, conv kernel, inner) of a Mamba-2 mixer."""
    heads = int(first(cfg, "mamba_num_heads", "mamba_n_heads", default=0) or 0)
    head_dim = int(first(cfg, "mamba_head_dim", "mamba_d_head", default=0) or 0)
    expand = float(first(cfg, "mamba_expand", "expand", default=2) or 2)
    inner = int(first(cfg, "mamba_d_ssm", default=0) or 0) or (heads * head_dim) or int(expand * h)
    if not heads and head_dim:
        heads = inner // head_dim
    if not head_dim and heads:
        head_dim = inner // heads
    groups = int(first(cfg, "n_groups", "mamba_n_groups", default=1) or 1)
    d_state = int(first(cfg, "ssm_state_size", "mamba_d_state", default=128) or 128)
    kernel = int(first(cfg, "conv_kernel", "mamba_d_conv", default=4) or 4)
    return heads, head_dim, groups, d_state, kernel, inner


def _mamba2_params(cfg: dict[str, Any], h: int) -> int:
    heads, _, groups, d_state, kernel, inner = _mamba2_dims(cfg, h)
    conv_dim = inner + 2 * groups * d_state
    in_proj = h * (inner + conv_dim + heads)  # z, xBC, dt
    if cfg.get("use_bias") or cfg.get("mamba_proj_bias"):
        in_proj += inner + conv_dim + heads
    conv = conv_dim * kernel + (conv_dim if cfg.get("use_conv_bias", True) else 0)
    out_proj = inner * h + (h if cfg.get("use_bias") or cfg.get("mamba_proj_bias") else 0)
    return in_proj + conv + 3 * heads + inner + out_proj  # dt_bias, A_log, D; gated norm


def _mamba2_state(cfg: dict[str, Any], h: int, dtype_bytes: float, ssm_bytes: float) -> int:
    heads, head_dim, groups, d_state, kernel, inner = _mamba2_dims(cfg, h)
    conv_dim = inner + 2 * groups * d_state
    return int(conv_dim * (kernel - 1) * dtype_bytes + heads * head_dim * d_state * ssm_bytes)


# ---- Mamba-1 (Jamba) ----


def _mamba1_dims(cfg: dict[str, Any], h: int) -> tuple[int, int, int, int]:
    inner = int(float(first(cfg, "mamba_expand", "expand", default=2)) * h)
    d_state = int(first(cfg, "mamba_d_state", "state_size", default=16))
    kernel = int(first(cfg, "mamba_d_conv", "conv_kernel", default=4))
    dt_rank = int(first(cfg, "mamba_dt_rank", "time_step_rank", default=0) or math.ceil(h / 16))
    return inner, d_state, kernel, dt_rank


def _mamba1_params(cfg: dict[str, Any], h: int) -> int:
    inner, d_state, kernel, dt_rank = _mamba1_dims(cfg, h)
    in_proj = h * 2 * inner
    conv = inner * kernel + inner
    x_proj = inner * (dt_rank + 2 * d_state)
    dt_proj = dt_rank * inner + inner
    norms = dt_rank + 2 * d_state  # Jamba's dt / B / C layernorms
    return in_proj + conv + x_proj + dt_proj + inner * d_state + inner + inner * h + norms


def _mamba1_state(cfg: dict[str, Any], h: int, dtype_bytes: float, ssm_bytes: float) -> int:
    inner, d_state, kernel, _ = _mamba1_dims(cfg, h)
    return int(inner * (kernel - 1) * dtype_bytes + inner * d_state * ssm_bytes)


# ---- Gated DeltaNet (Qwen3-Next, Qwen3.5) ----


def _deltanet_dims(cfg: dict[str, Any]) -> tuple[int, int, int, int, int]:
    """(key heads, key head dim, value heads, value head dim, conv kernel)."""
    return (
        int(cfg.get("linear_num_key_heads") or 16),
        int(cfg.get("linear_key_head_dim") or 128),
        int(cfg.get("linear_num_value_heads") or 32),
        int(cfg.get("linear_value_head_dim") or 128),
        int(cfg.get("linear_conv_kernel_dim") or 4),
    )


def _deltanet_params(cfg: dict[str, Any], h: int) -> int:
    nk, dk, nv, dv, kernel = _deltanet_dims(cfg)
    key_dim, value_dim = nk * dk, nv * dv
    qkvz = h * (2 * key_dim + 2 * value_dim)
    ba = h * 2 * nv
    conv = (2 * key_dim + value_dim) * kernel
    return qkvz + ba + conv + 2 * nv + dv + value_dim * h  # dt_bias, A_log; gated norm; out_proj


def _deltanet_state(cfg: dict[str, Any], dtype_bytes: float, ssm_bytes: float) -> int:
    nk, dk, nv, dv, kernel = _deltanet_dims(cfg)
    conv_dim = 2 * nk * dk + nv * dv
    return int(conv_dim * (kernel - 1) * dtype_bytes + nv * dk * dv * ssm_bytes)


# ---- Kimi Delta Attention (vllm/model_executor/layers/kda.py @01a7e5d9, KimiDeltaAttention) ----


def _kda_dims(cfg: dict[str, Any]) -> tuple[int, int, int]:
    """(heads, head dim, short-conv kernel) from linear_attn_config."""
    raw = cfg.get("linear_attn_config")
    linear: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out = []
    for key, default in (("num_heads", 32), ("head_dim", 128), ("short_conv_kernel_size", 4)):
        value = linear.get(key)
        value = default if value is None else value  # 0 is stated, not left out
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"linear_attn_config.{key} must be a positive whole number, not {value!r}")
        out.append(value)
    return out[0], out[1], out[2]


def _kda_params(cfg: dict[str, Any], h: int) -> int:
    heads, d, kernel = _kda_dims(cfg)
    proj = heads * d
    gates = h * d + d * proj  # f_a / f_b (the decay gate's low-rank pair)
    raw = cfg.get("linear_attn_config")
    full_rank = isinstance(raw, dict) and raw.get("use_full_rank_gate")
    out_gate = h * proj if full_rank else gates
    # q/k/v_proj, q/k/v short convolutions, b_proj, dt_bias, A_log, o_norm, o_proj
    return 3 * h * proj + 3 * kernel * proj + gates + out_gate + h * heads + proj + heads + d + proj * h


def _kda_state(cfg: dict[str, Any], dtype_bytes: float) -> int:
    heads, d, kernel = _kda_dims(cfg)
    # kda_state_shape / kda_state_dtype: q, k, v conv windows in the cache dtype, recurrent state float32
    return int(3 * heads * d * (kernel - 1) * dtype_bytes + heads * d * d * 4)


# ---- lightning attention (MiniMax-Text-01 / M1) ----


def _lightning_params(cfg: dict[str, Any], h: int, nq: int, d: int) -> int:
    # qkv (h -> 3 nq d), output gate (h -> nq d), norm (nq d), out_proj (nq d -> h)
    return h * 3 * nq * d + h * nq * d + nq * d + nq * d * h


def _lightning_state(nq: int, d: int, ssm_bytes: float) -> int:
    return int(nq * d * d * ssm_bytes)  # one d x d KV state per head (vLLM MiniMaxText01LinearAttention)


def mixer_params(cfg: dict[str, Any], mixer: str, h: int, nq: int, d: int) -> int:
    """Linear weights of one non-attention mixer (counted where attention weights would be)."""
    if mixer in (MAMBA2, PARALLEL):  # PARALLEL: the attention weights are added by the caller
        return _mamba2_params(cfg, h)
    if mixer == MAMBA1:
        return _mamba1_params(cfg, h)
    if mixer == DELTANET:
        return _deltanet_params(cfg, h)
    if mixer == LIGHTNING:
        return _lightning_params(cfg, h, nq, d)
    if mixer == KDA:
        return _kda_params(cfg, h)
    if mixer == JET:
        return jet_params(cfg, h)
    if mixer == CROSS_LAYER:
        return 2 * h * nq * d  # q_proj and o_proj only
    return 0


def ssm_width(cfg: dict[str, Any], dtype_bytes: float) -> float:
    """Bytes per element of the SSM / recurrent state as the config states it (its model dtype otherwise)."""
    return _ssm_bytes(cfg, dtype_bytes)


def _ssm_bytes(cfg: dict[str, Any], dtype_bytes: float) -> float:
    name = str(first(cfg, "mamba_ssm_cache_dtype", "mamba_ssm_dtype", default="") or "").lower()
    return {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0}.get(name, dtype_bytes)


def state_per_layer(cfg: dict[str, Any], mixer: str, h: int, nq: int, d: int, dtype_bytes: float) -> int:
    """Bytes of fixed per-sequence state one layer of this mixer holds (0 for attention / MLP)."""
    ssm = _ssm_bytes(cfg, dtype_bytes)
    if mixer in (MAMBA2, PARALLEL):
        return _mamba2_state(cfg, h, dtype_bytes, ssm)
    if mixer == MAMBA1:
        return _mamba1_state(cfg, h, dtype_bytes, ssm)
    if mixer == DELTANET:
        return _deltanet_state(cfg, dtype_bytes, ssm)
    if mixer == LIGHTNING:
        return _lightning_state(nq, d, ssm if ssm != dtype_bytes else 4.0)
    if mixer == KDA:
        return _kda_state(cfg, dtype_bytes)
    if mixer == JET:
        return jet_state(cfg, dtype_bytes)
    return 0


def state_note(mix: tuple[str, ...], per_seq: int) -> str:
    """One line saying which layers hold a fixed state and what it costs per sequence."""
    counts: dict[str, int] = {}
    for m in mix:
        if m in STATEFUL:
            counts[m] = counts.get(m, 0) + 1
    attn = sum(1 for m in mix if m == ATTENTION)
    parts = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items())
    return (
        f"hybrid: {attn} of {len(mix)} layers are attention and hold the growing KV cache; {parts} "
        f"layers hold a fixed state instead ({per_seq:,} bytes per running sequence, not per token; "
        "the engines take it out of the KV-cache memory: kvlint/capacity/state.py)"
    )


__all__ = [
    "ATTENTION",
    "CROSS_LAYER",
    "DELTANET",
    "JET",
    "KDA",
    "LIGHTNING",
    "MAMBA1",
    "MAMBA2",
    "MLP_ONLY",
    "MOE_ONLY",
    "PARALLEL",
    "STATEFUL",
    "kv_kinds",
    "mixer_params",
    "mixers",
    "state_note",
    "ssm_width",
    "state_per_layer",
]
