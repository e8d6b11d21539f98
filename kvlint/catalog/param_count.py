"""Parameter counts from a config's module shapes: attention, MLP / experts, norms, embeddings, vision.

The formulas follow the architectures' published module shapes (../shared/reference/engine_accounting.md
section E, checked against the calibration logs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvlint.catalog.arch import LayerParams
from kvlint.catalog.hf_keys import first
from kvlint.catalog.hybrid import ATTENTION, MLP_ONLY, MOE_ONLY, PARALLEL, mixer_params
from kvlint.catalog.native_keys import ernie_moe_layer
from kvlint.record import record

if TYPE_CHECKING:  # Nemotron-NAS block configs load when a config has them
    from kvlint.catalog.blocks import Block

# Families whose MLP is not gated (two matrices, not three).
UNGATED = {
    "falcon",
    "phi",
    "opt",
    "gpt2",
    "gpt_neox",
    "gpt_bigcode",
    "bloom",
    "starcoder2",
    "gptj",
    "mpt",
    "persimmon",  # dense_h_to_4h / dense_4h_to_h, relu2
    "nemotron_h",  # relu2 MLPs and experts: up and down only
    # transformers 5.24.0 ArceeMLP / NemotronMLP: up_proj and down_proj around relu2, no gate (vLLM arcee.py alike)
    "arcee",
    "nemotron",
}
# Families whose tie_word_embeddings defaults to True when the key is absent (their HF config class default).
_TIED_BY_DEFAULT = {
    "cohere",  # CohereConfig(tie_word_embeddings=True)
    "cohere2",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "opt",
    "falcon",
    "gpt2",
    "gpt_bigcode",
    "bloom",
    "phi3small",
}
# Families with four norms per decoder layer (pre/post attention and pre/post feed-forward).
_FOUR_NORMS = {"gemma2", "gemma3", "gemma3_text"}
# Families whose LayerNorms carry a bias beside the weight.
_NORM_BIAS = ("phi", "opt", "falcon", "gpt2", "gpt_neox", "starcoder2", "gpt_bigcode", "bloom", "persimmon")
# GPT-2-style families whose every linear layer (QKV, output, both MLP matrices) carries a bias.
_LINEAR_BIAS = ("gpt2", "gpt_bigcode", "gpt_neox", "bloom", "persimmon")


@record(frozen=True)
class Shape:
    """The sizes one decoder layer is built from (a record, not a NamedTuple: typing.NamedTuple compiles
    each field's annotation at import, about 1 ms of a one-file run)."""

    hidden: int
    query_heads: int
    kv_heads: int
    attn_dim: int  # per-head size of the attention projections (MLA: nope + rope)
    experts: int
    dense_inter: int
    moe_inter: int
    mlp_mats: int  # 3 for a gated MLP, 2 otherwise


def mlp_sizes(cfg: dict[str, Any], family: str, h: int) -> tuple[int, int, int, int]:
    """(experts, experts per token, dense intermediate size, expert intermediate size)."""
    experts = int(first(cfg, "num_local_experts", "num_experts", "n_routed_experts", default=0) or 0)
    top_k = int(first(cfg, "num_experts_per_tok", "experts_per_token", default=0) or 0)
    inter = int(
        first(
            cfg,
            "intermediate_size",
            "ff_intermediate_size",
            "ffn_hidden_size",
            "ffn_dim",
            "n_inner",
            default=0,
        )
        or 0
    )
    if not inter:
        inter = 4 * h
    elif family == "qwen":
        # Qwen (1.0) states both halves of its gated MLP: vLLM builds QWenMLP(hidden, intermediate_size // 2)
        inter //= 2
    if family.startswith("llama4"):
        return experts, top_k, int(cfg.get("intermediate_size_mlp") or inter), inter
    return experts, top_k, inter, int(cfg.get("moe_intermediate_size") or inter)


def _attn_params(cfg: dict[str, Any], family: str, h: int, nq: int, nkv: int, d: int) -> int:
    if cfg.get("kv_lora_rank"):
        q_lora = cfg.get("q_lora_rank")
        nope = int(cfg.get("qk_nope_head_dim") or 128)
        rope = int(cfg.get("qk_rope_head_dim") or 64)
        v = int(cfg.get("v_head_dim") or nope)
        kv_lora = int(cfg["kv_lora_rank"])
        q = h * q_lora + q_lora + q_lora * nq * (nope + rope) if q_lora else h * nq * (nope + rope)
        gate = h * nq * v if cfg.get("mla_use_output_gate") else 0  # Kimi-K3: a gate on the MLA output
        return q + h * (kv_lora + rope) + kv_lora + kv_lora * nq * (nope + v) + nq * v * h + gate
    params = h * nq * d + 2 * h * nkv * d + nq * d * h
    if cfg.get("attn_output_gate"):
        params += h * nq * d  # Qwen3-Next / Qwen3.5: q_proj also yields the output gate
    if (
        cfg.get("attention_bias")
        or cfg.get("qkv_bias")
        or cfg.get("add_qkv_bias")  # ChatGLM / GLM-4 (THUDM remote code)
        or family in ("qwen2", "qwen2_moe", "qwen2_vl", "phi", "opt", *_LINEAR_BIAS)
        or (family == "falcon" and cfg.get("bias"))
    ):
        params += nq * d + 2 * nkv * d
        if family in ("phi", "opt", *_LINEAR_BIAS) or cfg.get("bias"):
            params += h
    return params


def _norms(cfg: dict[str, Any], family: str, h: int, d: int) -> int:
    n = 4 * h if family in _FOUR_NORMS else 2 * h
    if family in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text") or cfg.get("use_qk_norm"):
        n += 2 * d
    if family in _NORM_BIAS:
        n *= 2  # LayerNorm has a bias beside the weight
    return n  # MLA's q_a/kv_a layernorms are counted in _attn_params


def _is_moe_layer(cfg: dict[str, Any], family: str, i: int, experts: int) -> bool:
    if not experts:
        return False
    if family.startswith("deepseek") or family == "kimi_k2" or cfg.get("n_routed_experts"):
        first_moe = int(cfg.get("first_k_dense_replace") or 0)
        freq = int(cfg.get("moe_layer_freq") or 1)
        return i >= first_moe and i % freq == 0
    if family in ("qwen2_moe", "qwen3_moe"):
        if i in (cfg.get("mlp_only_layers") or []):
            return False
        step = int(cfg.get("decoder_sparse_step") or 1)
        return (i + 1) % step == 0
    if family.startswith("llama4"):
        step = int(cfg.get("interleave_moe_layer_step") or 1)
        return (i + 1) % step == 0
    if family == "ernie4_5_moe":
        return ernie_moe_layer(cfg, i, int(cfg.get("num_hidden_layers") or 0))
    if family == "jamba":
        period = int(cfg.get("expert_layer_period") or 2)
        return i % period == int(cfg.get("expert_layer_offset") or 1)
    return True  # Mixtral, gpt-oss, ...: every layer


def _moe_layer(cfg: dict[str, Any], family: str, s: Shape, attn: int, norms: int) -> LayerParams:
    h, mats = s.hidden, s.mlp_mats
    latent = int(cfg.get("moe_latent_size") or 0)  # Nemotron-3 latent MoE: experts work in a smaller width
    routed = s.experts * mats * (latent or h) * s.moe_inter + (2 * h * latent if latent else 0)
    shared = 0
    if cfg.get("moe_shared_expert_intermediate_size"):  # Nemotron-H
        shared = (
            int(cfg.get("n_shared_experts") or 1) * mats * h * int(cfg["moe_shared_expert_intermediate_size"])
        )
    elif cfg.get("n_shared_experts"):
        shared = int(cfg["n_shared_experts"]) * mats * h * s.moe_inter
    elif cfg.get("shared_expert_intermediate_size"):
        shared = mats * h * int(cfg["shared_expert_intermediate_size"]) + h  # + shared_expert_gate
    elif family.startswith("llama4"):
        shared = mats * h * s.moe_inter
    router = h * s.experts
    if family == "gpt_oss":
        routed += s.experts * (2 * s.moe_inter + h)  # expert biases
        router += s.experts
    elif family == "ernie4_5_moe":
        router += s.experts  # gate.e_score_correction_bias
    return LayerParams(attn, 0, routed + shared, norms + router, shared)


def _dense_layer(cfg: dict[str, Any], family: str, s: Shape, attn: int, norms: int) -> LayerParams:
    mlp = s.mlp_mats * s.hidden * s.dense_inter
    if (
        cfg.get("mlp_bias")
        or family in ("phi", "opt", *_LINEAR_BIAS)
        or (family == "falcon" and cfg.get("bias"))
    ):
        mlp += (s.mlp_mats - 1) * s.dense_inter + s.hidden
    return LayerParams(attn, mlp, 0, norms)


def _single_block(cfg: dict[str, Any], family: str, s: Shape, mixer: str, attn: int) -> LayerParams:
    """A Nemotron-H layer: one norm and ONE of attention, Mamba, an MLP or a mixture of experts."""
    h = s.hidden
    if mixer == MOE_ONLY:
        return _moe_layer(cfg, family, s, 0, h)
    if mixer == MLP_ONLY:
        return LayerParams(0, s.mlp_mats * h * s.dense_inter, 0, h)
    body = attn if mixer == ATTENTION else mixer_params(cfg, mixer, h, s.query_heads, s.attn_dim)
    return LayerParams(body, 0, 0, h)


def layer_params(
    cfg: dict[str, Any], family: str, layers: int, s: Shape, mix: tuple[str, ...] | None = None
) -> tuple[list[LayerParams], int]:
    """Every decoder layer's parameters, and how many layers are MoE. `mix` names each layer's token
    mixer in a hybrid model (kvlint.catalog.hybrid): Mamba / linear-attention weights replace the
    attention weights of those layers."""
    out: list[LayerParams] = []
    moe_layers = 0
    attn = _attn_params(cfg, family, s.hidden, s.query_heads, s.kv_heads, s.attn_dim)
    norms = _norms(cfg, family, s.hidden, s.attn_dim)
    single_block = family in ("nemotron_h", "nemotron_3")
    for i in range(layers):
        if mix and single_block:
            moe_layers += mix[i] == MOE_ONLY
            out.append(_single_block(cfg, family, s, mix[i], attn))
            continue
        mixer_w = attn
        if mix and mix[i] != ATTENTION:
            mixer_w = mixer_params(cfg, mix[i], s.hidden, s.query_heads, s.attn_dim)
            mixer_w += attn if mix[i] == PARALLEL else 0
        if _is_moe_layer(cfg, family, i, s.experts):
            moe_layers += 1
            out.append(_moe_layer(cfg, family, s, mixer_w, norms))
        else:
            out.append(_dense_layer(cfg, family, s, mixer_w, norms))
    return out, moe_layers


def block_layer_params(
    cfg: dict[str, Any], family: str, s: Shape, blocks: tuple[Block, ...]
) -> list[LayerParams]:
    """Nemotron-NAS layers, each built from its own block config (kvlint.catalog.blocks): attention with
    the layer's KV heads and its input norm, or one hidden x hidden linear, or nothing; a gated MLP of the
    layer's width and its post-attention norm, or one linear, or nothing."""
    h, out = s.hidden, []
    for b in blocks:
        attn = {"attention": 0, "linear": h * h, "none": 0}[b.attention]
        if b.attention == "attention":
            attn = _attn_params(cfg, family, h, s.query_heads, b.kv_heads, s.attn_dim)
        mlp = {"mlp": s.mlp_mats * h * b.intermediate, "linear": h * h, "none": 0}[b.ffn]
        norms = h * ((b.attention != "none") + (b.ffn != "none"))
        out.append(LayerParams(attn, mlp, 0, norms))
    return out


def embeddings(
    config: dict[str, Any], cfg: dict[str, Any], family: str, vocab: int, h: int
) -> tuple[int, int, int]:
    """(embedding, lm_head (0 when tied), final norm) parameters."""
    tied = cfg.get("tie_word_embeddings")
    if tied is None:
        tied = config.get("tie_word_embeddings")
    if tied is None:
        tied = family in _TIED_BY_DEFAULT
    embed = vocab * h
    if family == "opt":
        embed += (int(cfg.get("max_position_embeddings") or 2048) + 2) * h  # learned positions
    elif family in ("gpt2", "gpt_bigcode"):
        embed += int(first(cfg, "n_positions", "max_position_embeddings", default=1024)) * h  # wpe
    elif family == "bloom":
        embed += 2 * h  # word_embeddings_layernorm
    lm_head = 0 if tied else vocab * h
    final = 2 * h if family in _NORM_BIAS else h
    return embed, lm_head, final


def _num_labels(config: dict[str, Any], default: int) -> int:
    """Output classes of a score head: id2label's length (compact keeps it as num_labels), else num_labels,
    else `default` (transformers PretrainedConfig: 2 labels; a reward model scores with 1)."""
    labels = config.get("id2label")
    if isinstance(labels, dict) and labels:
        return len(labels)
    n = config.get("num_labels")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else default


def score_head(config: dict[str, Any], h: int) -> int | None:
    """Parameters of the score head a sequence-classification / reward model has instead of its lm_head
    (None for a language model). vLLM builds: `*ForSequenceClassification` score = Linear(hidden,
    num_labels, bias=False) (transformers' *ForSequenceClassification, vLLM as_seq_cls_model, sglang 0.4.3
    models/llama_reward.py `self.score = nn.Linear(hidden_size, num_labels)`, no lm_head);
    Qwen2ForRewardModel / Qwen2ForProcessRewardModel score = Linear(hidden, hidden) + ReLU +
    Linear(hidden, num_labels), both with bias (qwen2_rm.py; 1 and 2 labels); InternLM2ForRewardModel
    v_head = Linear(hidden, 1, bias=False) (internlm2.py)."""
    archs = config.get("architectures")
    names = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    name = names[0] if names else ""
    if name.endswith("ForSequenceClassification"):
        return h * _num_labels(config, 2)
    if name in ("Qwen2ForRewardModel", "Qwen2ForProcessRewardModel"):
        labels = 2 if name == "Qwen2ForProcessRewardModel" else 1
        return h * h + h + h * labels + labels
    if name.endswith("ForRewardModel"):
        return h * _num_labels(config, 1)
    return None


def mtp_params(cfg: dict[str, Any], per: LayerParams, h: int) -> int:
    """Multi-token-prediction layers: each a decoder layer plus its 2h x h projection."""
    if not cfg.get("num_nextn_predict_layers"):
        return 0
    return int(cfg["num_nextn_predict_layers"]) * (
        per.attn + per.mlp + per.experts + per.replicated + 2 * h * h
    )
