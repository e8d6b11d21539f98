"""GGUF weights by tensor role: the ggml type llama.cpp's quantizer gives each tensor of a file type.

A llama.cpp file type (Q4_K_M, Q5_K_M, IQ3_M, Q8_0, ...) is a default type and a set of raises for the
tensors quantization hurts most. kvlint follows ggml-org/llama.cpp@007dbbf3 src/llama-quant.cpp, role by
role as `llama_tensor_get_type_impl` decides it:
- output.weight (and token_embd.weight when tied to it): Q8_0 for MXFP4_MOE, Falcon and a width the default
  type's block does not divide; Q5_K for the IQ1/IQ2 types; else Q6_K (Q8_0 files keep Q8_0);
- token_embd.weight (untied): IQ1/IQ2_XXS/XS Q2_K, IQ2_S/M and IQ3_XXS IQ3_S, TQ types Q4_K, else the default;
- the IQ1/IQ2 types: attn_v Q4_K (GQA >= 4 or >= 4 experts) else IQ3_S/Q2_K; ffn_down of the first eighth
  IQ3_S/Q2_K; attn_output IQ2_XXS (IQ1) or IQ3_S (IQ2_S/M), Q5_K with 8 experts; attn_k Q4_K with 8 experts;
- attn_v otherwise: Q2_K Q4_K/Q3_K by GQA; IQ3_XXS/IQ3_XS/IQ3_S Q4_K at GQA >= 4; IQ3_M Q4_K; Q3_K_M Q5_K on
  the first two, else Q4_K; Q3_K_L Q5_K; IQ4_NL/XS Q5_K at GQA >= 4; Q4_K_M/Q5_K_M Q6_K on `use_more_bits`
  layers; Q4_K_S Q5_K on the first four; a Llama 70B (80 layers, GQA) Q3_K/Q4_K -> Q5_K; 8 experts Q8_0;
- attn_k / attn_q: 8 experts attn_k Q8_0; IQ3_XS IQ3_XXS; IQ3_XXS IQ2_S;
- ffn_down (dense, shared and routed experts alike, by layer): Q2_K Q3_K; IQ3_XXS (no importance matrix)
  Q4_K/Q3_K; Q3_K_M Q5_K on the first sixteenth, else Q4_K; IQ3_M Q4_K on the first eighth; Q3_K_L Q5_K;
  Q4_K_M/Q5_K_M Q6_K on `use_more_bits` layers; IQ4_NL/XS (no importance matrix) Q5_K on the first eighth;
  Q4_K_S Q5_K on the first eighth;
- attn_output: Q2_K Q3_K, IQ3_XXS IQ3_S, Q3_K_M and IQ3_M Q4_K, Q3_K_L Q5_K; 8 experts Q5_K for the mixes;
- ffn_up / ffn_gate: IQ3_XS IQ3_XXS on the middle three quarters of the layers;
- MXFP4_MOE: the stacked expert tensors MXFP4, every other quantized tensor Q8_0.
Then `tensor_type_fallback`: a tensor whose row length (ne[0]) the chosen type's block does not divide takes
a type whose block does (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K/Q3_K -> Q4_0, the IQ types ->
IQ4_NL; F16 when even that does not divide). MoE expert widths such as 1408 (GLM-4.5-Air, DeepSeek-V2-Lite)
and hidden sizes such as 2880 (gpt-oss) are not multiples of 256, so their K-quant tensors are Q5_0/Q4_0.
Norms and 1-D tensors are not quantized; the MoE router (ffn_gate_inp) neither.

The importance matrix: llama-quantize refuses the IQ1/IQ2/IQ3_XXS/IQ3_XS and Q2_K_S types without one, so
those are priced as made with one; every other type as made without one (llama-quantize's default), which
moves only the first eighth of ffn_down for IQ3_XXS/IQ4_NL/IQ4_XS/Q4_0/Q5_0 by one type step. Not modelled:
fused QKV tensors (priced as q/k/v), MLA attention (priced at the default type), a quantizer's --tensor-type
overrides (the file types kvlint prices are llama.cpp's own: kvlint.catalog.gguf).
"""

from __future__ import annotations

from typing import NamedTuple

from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gguf import ROLES_SOURCE, bits_of, block_of

SOURCE = ROLES_SOURCE

_IQ_LOW = frozenset({"iq2_xxs", "iq2_xs", "iq1_s", "iq2_s", "iq2_m", "iq1_m"})  # the IQ1/IQ2 branch
_IQ2_SM = frozenset({"iq2_s", "iq2_m"})
# file types llama-quantize makes only with an importance matrix (tensor_requires_imatrix: a tensor of
# IQ1_S/IQ1_M/IQ2_XXS/IQ2_XS/IQ2_S/IQ3_XXS, or Q2_K in a Q2_K_S file; IQ3_XS puts attn_q/attn_k at IQ3_XXS)
_WITH_IMATRIX = _IQ_LOW | {"iq3_xxs", "iq3_xs", "q2_k_s"}
# tensor_type_fallback: the type a row length the target's block does not divide falls back to
_FALLBACK = {
    **dict.fromkeys(("iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_xs"), "iq4_nl"),
    **dict.fromkeys(("q2_k", "q3_k", "tq1_0", "tq2_0"), "q4_0"),
    "q4_k": "q5_0",
    "q5_k": "q5_1",
    "q6_k": "q8_0",
}


class Roles(NamedTuple):
    """The ggml type of each role (before the row-length fallback); per-layer roles as one type per layer."""

    default: str
    embed: str
    output: str
    attn_v: tuple[str, ...]
    attn_o: str
    ffn_down: tuple[str, ...]
    experts: str  # the stacked expert tensors of an MXFP4_MOE file (mxfp4); else the default
    attn_qk: str  # attn_q
    attn_k: str = ""
    ffn_up: tuple[str, ...] = ()  # ffn_up and ffn_gate (dense, shared and routed experts)


def more_bits(i: int, n: int) -> bool:
    """llama.cpp `use_more_bits`: the first and last eighth of the layers and every third one between."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def fallback(ggml_type: str, ncols: int) -> str:
    """The type a tensor whose rows are `ncols` long is stored at (llama-quant.cpp tensor_type_fallback)."""
    if ncols <= 0 or ncols % block_of(ggml_type) == 0:
        return ggml_type
    other = _FALLBACK.get(ggml_type, "f16")
    return other if ncols % block_of(other) == 0 else "f16"


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


def _attn_v(ftype: str, default: str, i: int, n: int, gqa: int, experts: int, is_70b: bool) -> str:
    if ftype in _IQ_LOW:
        if gqa >= 4 or experts >= 4:
            return "q4_k"
        return "iq3_s" if ftype in _IQ2_SM else "q2_k"
    rule = {
        "q2_k": "q4_k" if gqa >= 4 else "q3_k",
        "q2_k_s": "q4_k" if gqa >= 4 else default,
        "iq3_xxs": "q4_k" if gqa >= 4 else "iq3_xxs",  # made with an importance matrix
        "iq3_xs": "q4_k" if gqa >= 4 else default,
        "iq3_s": "q4_k" if gqa >= 4 else default,
        "iq3_m": "q4_k",
        "q3_k_m": "q5_k" if i < 2 else "q4_k",
        "q3_k_l": "q5_k",
        "iq4_nl": "q5_k" if gqa >= 4 else default,
        "iq4_xs": "q5_k" if gqa >= 4 else default,
        "q4_k_m": "q6_k" if more_bits(i, n) else default,
        "q5_k_m": "q6_k" if more_bits(i, n) else default,
        "q4_k_s": "q5_k" if i < 4 else default,
    }
    got = rule.get(ftype, default)
    if is_70b and got in ("q3_k", "q4_k"):
        got = "q5_k"
    return "q8_0" if experts == 8 else got


def _ffn_down(ftype: str, default: str, i: int, n: int, family: str, experts: int) -> str:
    if ftype in _IQ_LOW:
        return ("iq3_s" if ftype in _IQ2_SM else "q2_k") if i < n // 8 else default
    if family == "falcon" and ftype in ("q3_k_m", "q4_k_m"):
        if ftype == "q3_k_m":
            return "q5_k" if i < n // 16 else ("q4_k" if more_bits(i, n) else "q3_k")
        return "q6_k" if i < n // 16 else ("q5_k" if more_bits(i, n) else "q4_k")
    rule = {
        "q2_k": "q3_k",
        "q2_k_s": "q4_k" if i < n // 8 else default,
        "q3_k_m": "q5_k" if i < n // 16 else "q4_k",
        "iq3_m": "q4_k" if i < n // 8 or (experts == 8 and more_bits(i, n)) else default,
        "q3_k_l": "q4_k" if family == "falcon" else "q5_k",
        "q4_k_m": "q6_k" if more_bits(i, n) else default,
        "iq3_xxs": default,  # with an importance matrix (the no-imatrix Q4_K/Q3_K rule does not apply)
        "iq4_nl": "q5_k" if i < n // 8 else default,
        "iq4_xs": "q5_k" if i < n // 8 else default,
        "q5_k_m": "q6_k" if more_bits(i, n) else default,
        "q4_k_s": "q5_k" if i < n // 8 and family != "falcon" else default,
    }
    return rule.get(ftype, default)


_EIGHT_EXPERT_O = frozenset(
    {
        "q2_k",
        "iq3_xs",
        "iq3_xxs",
        "q3_k_s",
        "q3_k_m",
        "iq4_nl",
        "q4_k_s",
        "q4_k_m",
        "iq3_s",
        "iq3_m",
        "iq4_xs",
    }
)


def _attn_o(ftype: str, default: str, experts: int, family: str) -> str:
    if ftype in _IQ_LOW:
        if experts == 8:
            return "q5_k"
        return "iq2_xxs" if ftype in ("iq1_s", "iq1_m") else ("iq3_s" if ftype in _IQ2_SM else default)
    if family == "falcon":
        return "q4_k" if ftype == "q3_k_l" else default
    if experts == 8:
        return "q5_k" if ftype in _EIGHT_EXPERT_O else default
    rule = {"q2_k": "q3_k", "iq3_xxs": "iq3_s", "q3_k_m": "q4_k", "q3_k_l": "q5_k", "iq3_m": "q4_k"}
    return rule.get(ftype, default)


def _attn_qk(ftype: str, default: str, experts: int) -> tuple[str, str]:
    """(attn_q, attn_k)."""
    if ftype in _IQ_LOW:
        return default, ("q4_k" if experts == 8 else default)
    low = {"iq3_xs": "iq3_xxs", "iq3_xxs": "iq2_s"}.get(ftype, default)
    return low, ("q8_0" if experts == 8 else low)


def roles(
    ftype: str,
    default: str,
    *,
    layers: int,
    family: str,
    hidden: int,
    gqa: int,
    experts: int,
    is_70b: bool = False,
) -> Roles:
    """Each role's ggml type for a file of type `ftype` (lower case) whose main type is `default`."""
    if ftype == "mxfp4":  # MXFP4_MOE: stacked experts MXFP4, every other quantized tensor Q8_0
        q8 = ("q8_0",) * layers
        return Roles("q8_0", "q8_0", "q8_0", q8, "q8_0", q8, "mxfp4", "q8_0", "q8_0", q8)
    attn_q, attn_k = _attn_qk(ftype, default, experts)
    middle = range(layers // 8, 7 * layers // 8)
    up = tuple("iq3_xxs" if ftype == "iq3_xs" and i in middle else default for i in range(layers))
    return Roles(
        default=default,
        embed=_embed(ftype, default),
        output=_output(ftype, default, family, hidden, block_of(default)),
        attn_v=tuple(_attn_v(ftype, default, i, layers, gqa, experts, is_70b) for i in range(layers)),
        attn_o=_attn_o(ftype, default, experts, family),
        ffn_down=tuple(_ffn_down(ftype, default, i, layers, family, experts) for i in range(layers)),
        experts=default,
        attn_qk=attn_q,
        attn_k=attn_k,
        ffn_up=up,
    )


class Priced(NamedTuple):
    """Bytes of a GGUF file's tensors by role: embedding, output, and each layer's attention, MLP, experts."""

    embed: float
    output: float
    layers: tuple[tuple[float, float, float], ...]


def is_llama_70b(arch: ModelArch) -> bool:
    """llama.cpp's LLM_TYPE_70B for the llama architecture: 80 layers with grouped KV heads
    (src/models/llama.cpp load_hparams `case 80`; 80 layers with as many KV heads as query heads is 65B)."""
    return arch.family == "llama" and arch.layers == 80 and arch.kv_heads != arch.query_heads


def price(arch: ModelArch, ftype: str, default: str) -> Priced:
    """Each role of `arch` at the type llama.cpp gives it in a file of type `ftype`, after the fallback;
    routed experts the file keeps at the checkpoint's own type (`Quant.kept_experts`) at that type."""
    kept = arch.quant.kept_experts if arch.quant is not None else ""
    r = roles(
        ftype,
        default,
        layers=arch.layers,
        family=arch.family,
        hidden=arch.hidden_size,
        gqa=arch.query_heads // max(1, arch.kv_heads),
        experts=arch.num_experts,
        is_70b=is_llama_70b(arch),
    )
    h, d = arch.hidden_size, arch.head_dim
    k_size = v_size = h * arch.kv_heads * d
    o_cols = arch.query_heads * d
    o_size = o_cols * h
    parts = 3 if arch.gated_mlp else 2  # gate, up, down (or up, down) of equal size

    def bits(ggml_type: str, ncols: int) -> float:
        return bits_of(fallback(ggml_type, ncols))

    mxfp4 = ftype == "mxfp4"
    layers = []
    for i, lp in enumerate(arch.layer_params):
        if not arch.mla and lp.attn >= k_size + v_size + o_size:  # a standard q/k/v/o attention
            q_size = lp.attn - k_size - v_size - o_size
            attn = (
                q_size * bits(r.attn_qk, h)
                + k_size * bits(r.attn_k or r.attn_qk, h)
                + v_size * bits(r.attn_v[i], h)
                + o_size * bits(r.attn_o, o_cols)
            )
        else:
            attn = lp.attn * bits(r.default, h)
        up = r.ffn_up[i] if r.ffn_up else r.default
        inter = lp.mlp // (parts * h) if h else 0  # this layer's dense FFN width (ffn_down's row length)
        mlp = lp.mlp / parts * ((parts - 1) * bits(up, h) + bits(r.ffn_down[i], inter))
        routed = lp.experts - lp.shared
        e_cols = arch.moe_intermediate_size
        if mxfp4:
            experts = routed * bits_of("mxfp4") + lp.shared * bits("q8_0", h)
        elif kept:
            shared_bits = (parts - 1) * bits(up, h) + bits(r.ffn_down[i], e_cols)
            experts = routed * bits_of(kept) + lp.shared / parts * shared_bits
        else:
            per_expert_bits = (parts - 1) * bits(up, h) + bits(r.ffn_down[i], e_cols)
            experts = lp.experts / parts * per_expert_bits
        layers.append((attn / 8, mlp / 8, experts / 8))
    tied = not arch.lm_head_params
    embed_type = r.output if tied else r.embed
    return Priced(
        embed=arch.embed_params * bits(embed_type, h) / 8,
        output=arch.lm_head_params * bits(r.output, h) / 8,
        layers=tuple(layers),
    )
