"""GGUF weights by tensor role: the ggml type llama.cpp's quantizer gives each tensor of a file type.

A llama.cpp file type (Q4_K_M, Q5_K_M, Q3_K_M, Q6_K, Q8_0, ...) is a default type and a set of
raises for the tensors quantization hurts most. kvlint follows ggml-org/llama.cpp@007dbbf3
src/llama-quant.cpp `llama_tensor_get_type_impl`:
- output.weight (and token_embd.weight when tied to it): Q6_K, except Q8_0 files (Q8_0), MXFP4_MOE and
  Falcon (Q8_0), the IQ1/IQ2 types (Q5_K), and a width the block does not divide (Q8_0);
- token_embd.weight (untied): the default type, except IQ1/IQ2_XXS/XS (Q2_K), IQ2_S/M and IQ3_XXS (IQ3_S),
  TQ1_0/TQ2_0 (Q4_K);
- attn_v: Q4_K_M and Q5_K_M raise it to Q6_K on the layers `use_more_bits` picks (the first and last
  eighth and every third one between); Q3_K_M to Q5_K on the first two, else Q4_K; Q3_K_L Q5_K; Q4_K_S
  Q5_K on the first four; Q2_K Q4_K (GQA >= 4) or Q3_K; 8-expert MoE Q8_0 (attn_k too);
- ffn_down (dense and expert): Q4_K_M / Q5_K_M Q6_K on `use_more_bits` layers; Q3_K_M Q5_K on the first
  sixteenth, else Q4_K; Q3_K_L Q5_K; Q4_K_S Q5_K on the first eighth; Q2_K Q3_K;
- attn_output: Q2_K Q3_K, Q3_K_M Q4_K, Q3_K_L Q5_K (8-expert MoE: Q5_K for the K-quant mixes);
- MXFP4_MOE: expert tensors MXFP4, every other quantized tensor Q8_0.
Norms and 1-D tensors are not quantized; the MoE router (ffn_gate_inp) neither. Not modelled (priced at
the default type, a lower bound said so): the IQ types' own raises, imatrix-dependent choices, fused QKV
tensors, LLM_TYPE_70B's attn_v bump (one type step on 1/8 of attention), MLA attention.
"""

from __future__ import annotations

from typing import NamedTuple

from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gguf import ROLES_SOURCE, bits_of, block_of

SOURCE = ROLES_SOURCE

_IQ_LOW = frozenset({"iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq2_s", "iq2_m", "iq1_m"})


class Roles(NamedTuple):
    """The ggml type of each role; per-layer roles as one type per layer."""

    default: str
    embed: str
    output: str
    attn_v: tuple[str, ...]
    attn_o: str
    ffn_down: tuple[str, ...]
    experts: str  # expert up/gate (MXFP4_MOE: mxfp4)
    attn_qk: str  # attn_q / attn_k (8-expert MoE: attn_k Q8_0, counted with attn_q's type)


def more_bits(i: int, n: int) -> bool:
    """llama.cpp `use_more_bits`: the first and last eighth of the layers and every third one between."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def _output(ftype: str, default: str, family: str, hidden: int, block: int) -> str:
    if ftype == "mxfp4" or family == "falcon" or hidden % block:
        return "q8_0"
    if ftype in _IQ_LOW:
        return "q5_k"
    return default if default == "q8_0" else "q6_k"


def _embed(ftype: str, default: str) -> str:
    if ftype in ("iq2_xxs", "iq2_xs", "iq1_s", "iq1_m"):
        return "q2_k"
    if ftype in ("iq2_s", "iq2_m", "iq3_xxs"):
        return "iq3_s"
    if ftype in ("tq1_0", "tq2_0"):
        return "q4_k"
    return "q8_0" if ftype == "mxfp4" else default


def _attn_v(ftype: str, default: str, i: int, n: int, gqa: int, experts: int) -> str:
    if experts == 8:
        return "q8_0"
    if ftype in ("q4_k_m", "q5_k_m"):
        return "q6_k" if more_bits(i, n) else default
    rule = {
        "q3_k_m": "q5_k" if i < 2 else "q4_k",
        "q3_k_l": "q5_k",
        "q4_k_s": "q5_k" if i < 4 else default,
        "q2_k": "q4_k" if gqa >= 4 else "q3_k",
        "q2_k_s": "q4_k" if gqa >= 4 else default,
    }
    return rule.get(ftype, default)


def _ffn_down(ftype: str, default: str, i: int, n: int, family: str) -> str:
    if family == "falcon" and ftype == "q4_k_m":
        return "q6_k" if i < n // 16 else ("q5_k" if more_bits(i, n) else "q4_k")
    rule = {
        "q4_k_m": "q6_k" if more_bits(i, n) else default,
        "q5_k_m": "q6_k" if more_bits(i, n) else default,
        "q3_k_m": "q5_k" if i < n // 16 else "q4_k",
        "q3_k_l": "q4_k" if family == "falcon" else "q5_k",
        "q4_k_s": "q5_k" if i < n // 8 and family != "falcon" else default,
        "q2_k": "q3_k",
        "q2_k_s": "q4_k" if i < n // 8 else default,
    }
    return rule.get(ftype, default)


def _attn_o(ftype: str, default: str, experts: int) -> str:
    if experts == 8:
        k_mixes = ("q2_k", "q3_k_s", "q3_k_m", "q4_k_s", "q4_k_m")
        return "q5_k" if ftype in k_mixes else default
    return {"q2_k": "q3_k", "q3_k_m": "q4_k", "q3_k_l": "q5_k"}.get(ftype, default)


def roles(
    ftype: str, default: str, *, layers: int, family: str, hidden: int, gqa: int, experts: int
) -> Roles:
    """Each role's ggml type for a file of type `ftype` (lower case) whose main type is `default`."""
    base = "q8_0" if ftype == "mxfp4" else default
    attn_v = tuple(_attn_v(ftype, base, i, layers, gqa, experts) for i in range(layers))
    down = tuple(_ffn_down(ftype, base, i, layers, family) for i in range(layers))
    return Roles(
        default=base,
        embed=_embed(ftype, base),
        output=_output(ftype, base, family, hidden, block_of(base)),
        attn_v=attn_v,
        attn_o=_attn_o(ftype, base, experts),
        ffn_down=down,
        experts="mxfp4" if ftype == "mxfp4" else base,
        attn_qk=base,
    )


class Priced(NamedTuple):
    """Bytes of a GGUF file's tensors by role: embedding, output, and each layer's attention, MLP, experts."""

    embed: float
    output: float
    layers: tuple[tuple[float, float, float], ...]


def price(arch: ModelArch, ftype: str, default: str) -> Priced:
    """Each role of `arch` at the type llama.cpp gives it in a file of type `ftype`."""
    gqa = arch.query_heads // max(1, arch.kv_heads)
    r = roles(
        ftype,
        default,
        layers=arch.layers,
        family=arch.family,
        hidden=arch.hidden_size,
        gqa=gqa,
        experts=arch.num_experts,
    )
    h, d = arch.hidden_size, arch.head_dim
    v_size, o_size = h * arch.kv_heads * d, arch.query_heads * d * h
    down_share = 1 / 3 if arch.gated_mlp else 1 / 2  # gate, up, down (or up, down) of equal size
    layers = []
    for i, lp in enumerate(arch.layer_params):
        split = not arch.mla and lp.attn >= v_size + o_size  # a standard q/k/v/o attention
        if split:
            rest = lp.attn - v_size - o_size
            attn = rest * bits_of(r.attn_qk) + v_size * bits_of(r.attn_v[i]) + o_size * bits_of(r.attn_o)
        else:
            attn = lp.attn * bits_of(r.default)
        down = bits_of(r.ffn_down[i])
        mlp = lp.mlp * ((1 - down_share) * bits_of(r.default) + down_share * down)
        exp_down = bits_of(r.experts) if ftype == "mxfp4" else down
        experts = lp.experts * ((1 - down_share) * bits_of(r.experts) + down_share * exp_down)
        layers.append((attn / 8, mlp / 8, experts / 8))
    tied = not arch.lm_head_params
    embed_type = r.output if tied else r.embed
    return Priced(
        embed=arch.embed_params * bits_of(embed_type) / 8,
        output=arch.lm_head_params * bits_of(r.output) / 8,
        layers=tuple(layers),
    )
