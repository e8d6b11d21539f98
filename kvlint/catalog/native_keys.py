"""Configs that name their sizes in their own keys (DBRX, MPT, Persimmon, ERNIE 4.5 MoE, Bailing MoE, XVERSE MoE, Grok),
renamed to the
Hugging Face keys the rest of the parser reads, as the engine reads them:
- DBRX (vllm/model_executor/models/dbrx.py): n_layers blocks of d_model width, n_heads query heads of
  d_model // n_heads, attn_config.kv_n_heads KV heads (ModelConfig.get_total_num_kv_heads), every block a
  mixture of ffn_config.moe_num_experts gated experts (ws holds w1 and v1, w2s the down matrix) of
  ffn_config.ffn_hidden_size, moe_top_k per token; LayerNorms and linears without bias; untied lm_head.
- MPT (vllm/model_executor/models/mpt.py): n_layers, d_model, n_heads; the MLP is up/down of
  expansion_ratio * d_model (no gate); KV heads attn_config.kv_n_heads when stated, else n_heads
  (get_total_num_kv_heads); biases unless no_bias; ALiBi (MPTAttention asserts attn_config.alibi), so no
  RoPE cache; lm_head is the token embedding (MPTForCausalLM asserts tie_word_embeddings).
- Persimmon (vllm/model_executor/models/persimmon.py): dense_h_to_4h / dense_4h_to_h (two matrices,
  relu2, with bias), query_key_value and dense with bias, LayerNorms with bias, LayerNorm q/k norms of
  head_dim when qk_layernorm, RoPE on partial_rotary_factor of the head (PersimmonConfig default 0.5).
- ERNIE 4.5 MoE (vllm/model_executor/models/ernie45_moe.py): moe_num_experts experts of
  moe_intermediate_size, moe_k per token, moe_num_shared_experts shared experts as one MLP of
  moe_intermediate_size * moe_num_shared_experts; layer i is MoE when (i + 1) % moe_layer_interval == 0
  and moe_layer_start_index <= i <= moe_layer_end_index (default the last layer); qkv bias when use_bias.
- Bailing MoE, inclusionAI's Ling (vLLM bailing_moe.py, as in the patch the Ling repository ships,
  github:inclusionAI/Ling@5ccaeae:inference/vllm/bailing_moe.patch): every block is a BailingMoE of
  num_experts experts of moe_intermediate_size plus num_shared_experts shared experts as one MLP of
  moe_intermediate_size * num_shared_experts; query_key_value has a bias when use_bias or use_qkv_bias
  (the dense / expert biases use_bias also adds are not counted: the Ling configs state use_bias false).
- XVERSE MoE (model_type xverse with num_experts): every layer holds num_experts experts of intermediate_size
  ("each expert is 1/4 of a standard FFN", d_ff 4096 for XVERSE-MoE-A36B) plus num_shared_experts shared
  experts of the same width, moe_top_k routed per token; the model card's table (n_layers 50, d_model 6144,
  d_ff 4096, 64 non-shared + 2 shared experts, top_k 6: 255.4B total, 36.5B activated,
  https://huggingface.co/xverse/XVERSE-MoE-A36B) is met by exactly this count.
- Hunyuan (vllm/model_executor/models/hunyuan_v1.py @00f8d445): head size `head_dim`, else
  `attention_head_dim`, else hidden / heads (HunYuanAttention); a layer is MoE only when num_experts > 1
  (`_is_moe`); `moe_topk`, `moe_intermediate_size` and `num_shared_expert` may be per-layer lists
  (HunYuanSparseMoeBlock takes `[layer_id]`; the released configs repeat one value, kvlint takes the
  largest); with use_mixed_mlp_moe the shared expert is one MLP of intermediate_size * num_shared_expert.
  Cross-layer attention (use_cla, cla_share_factor) is read in kvlint.catalog.hybrid.
- Kimi Linear / Kimi-K3 (vLLM kimi_linear.py, KimiLinearConfig): num_experts experts, num_experts_per_token
  per token, num_shared_experts shared experts of moe_intermediate_size, the first first_k_dense_replace
  layers dense (as DeepSeek-V3); Kimi-K3's routed experts work in routed_expert_hidden_size (a latent
  MoE: down / up projections around the experts, as Nemotron-3's moe_latent_size); the Kimi Delta
  Attention layers are read in kvlint.catalog.hybrid.
- Grok (SGLang python/sglang/srt/models/grok.py @031ad4ce, Grok1DecoderLayer; chosen by the architecture,
  as the engines choose the model class: Grok-2's config.json calls its model_type "git"): every layer is a
  Grok1MoE of num_local_experts experts of moe_intermediate_size (else intermediate_size), and with
  residual_moe a dense Grok1MLP of intermediate_size beside it (moe_with_rmoe adds both outputs).
- GraniteMoeShared / GraniteMoeHybrid (vLLM granitemoehybrid.py @0195c9ec, GraniteMoeHybrid*DecoderLayer): a layer holds
  num_local_experts experts of intermediate_size when num_local_experts > 0, and a shared MLP of
  shared_intermediate_size when that is not 0, whose output is added to the experts'; with no experts the shared
  MLP is the layer's only MLP (intermediate_size is then not read).
- Jet-Nemotron (github:NVlabs/Jet-Nemotron@94cbd124 modeling_jet_nemotron.py JetNemotronAttention): q/k/v
  projections with bias; its JetBlock layers are read in kvlint.catalog.jet_block.
"""

from __future__ import annotations

from typing import Any

_NATIVE_KEY_TEXT = """
    n_layers n_heads attn_config ffn_config expansion_ratio no_bias qk_layernorm use_bias moe_num_experts
    moe_k moe_num_shared_experts moe_layer_start_index moe_layer_end_index moe_layer_interval
    num_shared_experts use_qkv_bias moe_top_k moe_topk num_shared_expert use_mixed_mlp_moe use_cla
    cla_share_factor attention_head_dim num_experts_per_token routed_expert_hidden_size linear_attn_config
    mla_use_output_gate residual_moe efficient_attention_config shared_intermediate_size
"""
NATIVE_KEYS = tuple(_NATIVE_KEY_TEXT.split())
# the parts of DBRX / MPT's nested attn_config and ffn_config that the parser reads
_NESTED_KEEP = ("kv_n_heads", "alibi", "qk_ln", "moe_num_experts", "moe_top_k", "ffn_hidden_size")
PERSIMMON_ROTARY_DEFAULT = 0.5  # PersimmonConfig(partial_rotary_factor=0.5) when the config omits it


def compact_nested(value: dict[str, Any]) -> dict[str, Any]:
    """The part of an attn_config / ffn_config kept in the compact catalog copy."""
    return {k: v for k, v in value.items() if k in _NESTED_KEEP}


def _sub(cfg: dict[str, Any], key: str) -> dict[str, Any]:
    value = cfg.get(key)
    return value if isinstance(value, dict) else {}


def _set(cfg: dict[str, Any], key: str, value: Any) -> None:
    if cfg.get(key) is None and value is not None:
        cfg[key] = value


def _dbrx(cfg: dict[str, Any]) -> None:
    attn, ffn = _sub(cfg, "attn_config"), _sub(cfg, "ffn_config")
    _set(cfg, "num_key_value_heads", attn.get("kv_n_heads"))
    _set(cfg, "num_local_experts", ffn.get("moe_num_experts"))
    _set(cfg, "num_experts_per_tok", ffn.get("moe_top_k"))
    _set(cfg, "intermediate_size", ffn.get("ffn_hidden_size"))


def _mpt(cfg: dict[str, Any]) -> None:
    attn = _sub(cfg, "attn_config")
    _set(cfg, "num_key_value_heads", attn.get("kv_n_heads"))
    ratio, width = cfg.get("expansion_ratio"), cfg.get("d_model")
    if isinstance(ratio, (int, float)) and isinstance(width, int) and ratio > 0:
        _set(cfg, "intermediate_size", int(ratio * width))
    if not cfg.get("no_bias", True):
        _set(cfg, "attention_bias", True)
        _set(cfg, "mlp_bias", True)
    _set(cfg, "tie_word_embeddings", True)  # vLLM MPTForCausalLM asserts tie_word_embeddings
    # qk_ln (LayerNorms of d_model on q and k) is not counted: 4 x d_model per layer at most


def _persimmon(cfg: dict[str, Any]) -> None:
    _set(cfg, "partial_rotary_factor", PERSIMMON_ROTARY_DEFAULT)
    if cfg.get("qk_layernorm"):
        _set(cfg, "use_qk_norm", True)


def _ernie_moe(cfg: dict[str, Any]) -> None:
    _set(cfg, "num_local_experts", cfg.get("moe_num_experts"))
    _set(cfg, "num_experts_per_tok", cfg.get("moe_k"))
    _set(cfg, "n_shared_experts", cfg.get("moe_num_shared_experts"))
    if cfg.get("use_bias"):
        _set(cfg, "qkv_bias", True)
        _set(cfg, "mlp_bias", True)


def _bailing_moe(cfg: dict[str, Any]) -> None:
    _set(cfg, "n_shared_experts", cfg.get("num_shared_experts"))
    if cfg.get("use_bias") or cfg.get("use_qkv_bias"):
        _set(cfg, "qkv_bias", True)


def _xverse(cfg: dict[str, Any]) -> None:
    if cfg.get("num_experts"):
        _set(cfg, "num_experts_per_tok", cfg.get("moe_top_k"))
        _set(cfg, "n_shared_experts", cfg.get("num_shared_experts"))


def _largest(value: Any, key: str = "a per-layer list") -> Any:
    """A per-layer list's largest entry (Hunyuan states one value per layer); a scalar as it is."""
    if isinstance(value, list):
        if not value or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ValueError(f"{key} must list one whole number per layer, not {str(value)[:60]}")
        return max(value)
    return value


def _hunyuan(cfg: dict[str, Any]) -> None:
    _set(cfg, "head_dim", cfg.get("attention_head_dim"))
    experts = _largest(cfg.get("num_experts"), "num_experts")
    cfg["num_experts"] = experts if isinstance(experts, int) and experts > 1 else 0  # _is_moe
    _set(cfg, "num_experts_per_tok", _largest(cfg.get("moe_topk"), "moe_topk"))
    if isinstance(cfg.get("moe_intermediate_size"), list):
        cfg["moe_intermediate_size"] = _largest(cfg["moe_intermediate_size"], "moe_intermediate_size")
    shared = _largest(cfg.get("num_shared_expert"), "num_shared_expert")
    inter = cfg.get("intermediate_size")
    if (
        cfg.get("use_mixed_mlp_moe")
        and cfg["num_experts"]
        and isinstance(shared, int)
        and isinstance(inter, int)
    ):
        _set(cfg, "moe_shared_expert_intermediate_size", inter * shared)


def _kimi_linear(cfg: dict[str, Any]) -> None:
    _set(cfg, "n_routed_experts", cfg.get("num_experts"))
    _set(cfg, "num_experts_per_tok", cfg.get("num_experts_per_token"))
    _set(cfg, "n_shared_experts", cfg.get("num_shared_experts"))
    _set(cfg, "moe_latent_size", cfg.get("routed_expert_hidden_size"))


def _jet_nemotron(cfg: dict[str, Any]) -> None:
    _set(cfg, "qkv_bias", True)  # JetNemotronAttention: q/k/v_proj with bias, o_proj without (as Qwen2)


def _grok(cfg: dict[str, Any]) -> None:
    inter = cfg.get("intermediate_size")
    if cfg.get("residual_moe") and isinstance(inter, int):
        _set(cfg, "moe_shared_expert_intermediate_size", inter)  # the residual MLP: one more gated MLP


def _granite_shared(cfg: dict[str, Any]) -> None:
    shared = cfg.get("shared_intermediate_size")
    if not isinstance(shared, int) or isinstance(shared, bool) or shared <= 0:
        return
    if cfg.get("num_local_experts"):
        _set(cfg, "moe_shared_expert_intermediate_size", shared)
    else:
        cfg["intermediate_size"] = (
            shared  # the shared MLP is the only MLP: vLLM never reads intermediate_size
        )


_RENAMES = {"n_layers": "num_hidden_layers", "n_heads": "num_attention_heads", "d_model": "hidden_size"}
_BY_FAMILY = {
    "dbrx": _dbrx,
    "mpt": _mpt,
    "persimmon": _persimmon,
    "ernie4_5_moe": _ernie_moe,
    "bailing_moe": _bailing_moe,
    "xverse": _xverse,
    "hunyuan": _hunyuan,
    "hunyuan_v1_dense": _hunyuan,
    "hunyuan_v1_moe": _hunyuan,
    "kimi_linear": _kimi_linear,
    "jet_nemotron": _jet_nemotron,
    "granitemoeshared": _granite_shared,
    "granitemoehybrid": _granite_shared,
}
# readers chosen by the architecture class the engines load (a config's model_type may be wrong)
_BY_ARCH = {"Grok1ForCausalLM": _grok, "Grok1ModelForCausalLM": _grok, "GrokForCausalLM": _grok}


def native_keys(cfg: dict[str, Any], family: str) -> dict[str, Any]:
    """The config with its family's own keys also stated under the Hugging Face names (a copy; the keys
    the config already states win)."""
    archs = cfg.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else ""
    reader = _BY_FAMILY.get(family) or _BY_ARCH.get(arch)
    if reader is None:
        return cfg
    out = dict(cfg)
    if family in ("dbrx", "mpt"):
        for key, target in _RENAMES.items():
            _set(out, target, cfg.get(key))
        _set(out, "max_position_embeddings", cfg.get("max_seq_len"))
    reader(out)
    return out


def ernie_moe_layer(cfg: dict[str, Any], i: int, layers: int) -> bool:
    """vLLM Ernie4_5_MoeDecoderLayer: MoE when (i + 1) % interval == 0 and start <= i <= end; an end index of
    -1 (transformers' Ernie4_5_MoeConfig default) or none means the last layer, as that config class reads it."""
    interval = int(cfg.get("moe_layer_interval") or 1)
    start = int(cfg.get("moe_layer_start_index") or 0)
    end = cfg.get("moe_layer_end_index")
    end = end if isinstance(end, int) and end >= 0 else layers - 1
    return (i + 1) % interval == 0 and start <= i <= end
