"""Read a Hugging Face config.json (or kvlint's compact copy of one) into a ModelArch.

The readings follow vLLM's, with the code they mirror named at each step:
- head size: vllm/transformers_utils/config (ModelConfig.get_head_size): MLA kv_lora_rank +
  qk_rope_head_dim; else `head_dim`; else hidden_size // num_attention_heads.
- KV heads: ModelConfig.get_total_num_kv_heads: Falcon multi_query -> 1; else the first of
  n_head_kv, num_kv_heads, num_key_value_heads, multi_query_group_num; else the query heads.
The concerns live beside this module: keys and lengths (hf_keys), layer kinds (layer_kinds),
quantization (quant) and parameter counting (param_count).
"""

from __future__ import annotations

from typing import Any

from kvlint.bounds import config_problem
from kvlint.catalog.arch import CHUNKED, CROSS, NONE, LayerParams, ModelArch
from kvlint.catalog.conformer import implied_vision_block
from kvlint.catalog.hf_keys import (
    KEEP_KEYS,
    ConfigError,
    compact,
    config_max_len,
    derive_max_len,
    dtype_of,
    first,
    names_problem,
    need,
    rope_cache_elems,
    served_part,
    text_part,
)
from kvlint.catalog.hybrid import STATEFUL, mixers, ssm_width, state_note, state_per_layer
from kvlint.catalog.layer_kinds import unpriced_attention, window_and_kinds
from kvlint.catalog.native_keys import native_keys
from kvlint.catalog.nested_defaults import with_text_defaults, with_vision_defaults
from kvlint.catalog.param_count import (
    UNGATED,
    Shape,
    block_layer_params,
    embeddings,
    layer_params,
    mlp_sizes,
    mtp_params,
    score_head,
)
from kvlint.catalog.quant import read_quant
from kvlint.catalog.vision import cross_layer_extra, encoder_tokens, vision_params


def _legacy(config: dict[str, Any], family: str) -> tuple[dict[str, Any], str]:
    """Pre-transformers Falcon (model_type RefinedWeb / RefinedWebModel) and BLOOM's n_embed, read as
    vLLM's RWConfig / transformers' configs read them: hidden_size from n_embed, n_head_kv 1 when
    absent, the new decoder architecture when hidden_size is 8192 (RWConfig's falcon-40b rule)."""
    if family not in ("RefinedWeb", "RefinedWebModel") and "n_embed" not in config:
        return config, family
    cfg = dict(config)
    if cfg.get("hidden_size") is None and cfg.get("n_embed") is not None:
        cfg["hidden_size"] = cfg["n_embed"]
    if family in ("RefinedWeb", "RefinedWebModel"):
        family = cfg["model_type"] = "falcon"
        if cfg.get("n_head_kv") is None:
            cfg["n_head_kv"] = 1
        if cfg.get("hidden_size") == 8192:
            cfg["new_decoder_architecture"] = True
    return cfg, family


def _kv_heads(cfg: dict[str, Any], family: str, nq: int) -> int:
    # vLLM get_total_num_kv_heads: multi_query means one KV head (GPTBigCode, Falcon-7B), except on
    # Falcon's new decoder architecture (Falcon-40B/180B), which states n_head_kv.
    if cfg.get("multi_query") and not (family == "falcon" and cfg.get("new_decoder_architecture")):
        return 1
    return int(
        first(cfg, "n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num", default=nq)
    )


def _head_dims(cfg: dict[str, Any], h: int, nq: int) -> tuple[bool, int, int]:
    """(MLA?, KV head size, attention projection head size)."""
    if cfg.get("kv_lora_rank"):
        head_dim = int(cfg["kv_lora_rank"]) + int(cfg.get("qk_rope_head_dim") or 0)
        attn_dim = int(cfg.get("qk_nope_head_dim") or 128) + int(cfg.get("qk_rope_head_dim") or 64)
        return True, head_dim, attn_dim
    head_dim = int(first(cfg, "head_dim", "hidden_size_per_head", "kv_channels", default=0) or h // nq)
    return False, head_dim, head_dim


def _mla_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    nope = int(cfg.get("qk_nope_head_dim") or 128)
    return {
        "kv_lora_rank": int(cfg["kv_lora_rank"]),
        "qk_rope_head_dim": int(cfg.get("qk_rope_head_dim") or 0),
        "mla_dims": (nope, int(cfg.get("qk_rope_head_dim") or 64), int(cfg.get("v_head_dim") or nope)),
    }


def _dsa_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """DeepSeek sparse attention: vLLM builds the indexer when the config has index_topk (deepseek_v2.py
    `is_v32 = hasattr(config, "index_topk")`); the defaults are vLLM's (head dim 128, freq 1, offset 2)."""
    if "index_topk" not in cfg:
        return {}

    def whole(key: str, default: int) -> int:
        v = cfg.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else default

    pattern = cfg.get("index_topk_pattern")  # "F"/"S" per layer, a string or a list of letters
    if isinstance(pattern, list) and all(isinstance(c, str) for c in pattern):
        pattern = "".join(pattern)
    pattern = pattern if isinstance(pattern, str) else ""
    rule = (whole("index_topk_freq", 1), whole("index_skip_topk_offset", 2), pattern)
    return {"dsa_index_head_dim": whole("index_head_dim", 128), "dsa_index_rule": rule}


_DTYPE_BYTES = {"float32": 4.0, "float16": 2.0, "bfloat16": 2.0}


def _hybrid_state(cfg: dict[str, Any], mix: tuple[str, ...] | None, shape: Shape, dtype: str) -> int:
    """Fixed per-sequence state of the Mamba / linear-attention layers (0 without any)."""
    if not mix:
        return 0
    width = _DTYPE_BYTES.get(dtype, 2.0)
    h, nq, d = shape.hidden, shape.query_heads, shape.attn_dim
    return sum(state_per_layer(cfg, m, h, nq, d, width) for m in mix)


def _ssm_elems(cfg: dict[str, Any], mix: tuple[str, ...] | None, shape: Shape, dtype: str) -> int:
    """Elements of the SSM / recurrent part of that state (the part an engine may keep at another width than
    the config's: SGLang's --mamba-ssm-dtype), counted as the state in float32 less the state in 16-bit."""
    if not mix:
        return 0
    wide = _hybrid_state({**cfg, "mamba_ssm_cache_dtype": "float32"}, mix, shape, dtype)
    narrow = _hybrid_state({**cfg, "mamba_ssm_cache_dtype": "bfloat16"}, mix, shape, dtype)
    return max(0, wide - narrow) // 2


def _cross(p: LayerParams, head_dim: int) -> LayerParams:
    return LayerParams(p.attn, p.mlp, p.experts, p.replicated + cross_layer_extra(head_dim))


def _notes(cfg: dict[str, Any], family: str, mla: bool, head_dim: int) -> tuple[str, ...]:
    notes: list[str] = []
    if mla:
        notes.append(
            f"MLA: one latent of {head_dim} values per token per layer (kv_lora_rank + qk_rope_head_dim)"
        )
    if family in ("gemma3", "gemma3_text") and isinstance(cfg.get("rope_scaling"), dict):
        notes.append(
            "Gemma 3's max_position_embeddings already includes its rope scaling (vLLM skips the factor)"
        )
    return tuple(notes)


def _vision_int(config: dict[str, Any], key: str) -> int | None:
    """An int field of vision_config as the checkpoint states it (None when absent)."""
    v = config.get("vision_config") or implied_vision_block(config)
    value = v.get(key) if isinstance(v, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text_config(config: Any) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(the served config, its text part with the class defaults and standard key names, the
    family), checked before any arithmetic; a ConfigError says what kvlint cannot read or price."""
    if not isinstance(config, dict):
        raise ConfigError("config.json is not a JSON object")
    names = names_problem(config)
    if names:
        raise ConfigError(names)
    config = served_part(config)  # an Omni model: the thinker is what the engine loads
    cfg, family = _legacy(*text_part(config))
    cfg = with_text_defaults(config, cfg, family)  # a nested text config omits its class defaults
    cfg = native_keys(cfg, family)  # DBRX / MPT / Persimmon / ERNIE 4.5 MoE name their sizes their own way
    problem = config_problem(cfg)  # before any arithmetic: a per-layer loop runs on num_hidden_layers
    if problem:
        raise ConfigError(problem)
    unpriced = unpriced_attention(cfg)
    if unpriced:
        raise ConfigError(f"kvlint cannot price this model yet: {unpriced}")
    pattern = cfg.get("layers_block_type") or cfg.get("hybrid_override_pattern")
    if first(cfg, "num_hidden_layers", "n_layer", "num_layers") is None and isinstance(pattern, (list, str)):
        cfg = dict(cfg, num_hidden_layers=len(pattern))  # NemotronHConfig: one layer per pattern entry
    return config, cfg, family


def _blocks(cfg: dict[str, Any], layers: int, h: int, nq: int, nkv: int) -> tuple[Any, int]:
    """Nemotron-NAS: each layer its own attention and FFN (kvlint/catalog/blocks.py, loaded only for
    a config with block_configs): (the blocks or None, the KV heads they agree on, else `nkv`)."""
    if cfg.get("block_configs") is None:
        return None, nkv
    from kvlint.catalog.blocks import BlockError, read_blocks, uniform_kv_heads

    try:
        blocks = read_blocks(cfg, layers, h, nq)
        return blocks, ((uniform_kv_heads(blocks) or nkv) if blocks else nkv)
    except BlockError as exc:
        raise ConfigError(str(exc)) from None


def _max_context(cfg: dict[str, Any], family: str) -> tuple[int, str]:
    """The maximum context the config derives, and how; a RoPE factor that scales it to nothing (an
    override such as TGI --rope-factor) is a ConfigError."""
    max_len, max_note = derive_max_len(cfg, family)
    if max_len < 1:
        raise ConfigError(
            f"the maximum context comes out at {max_len} tokens ({max_note}): expected at least 1"
        )
    return max_len, max_note


def _layer_params(
    cfg: dict[str, Any],
    family: str,
    layers: int,
    shape: Shape,
    mix: Any,
    blocks: Any,
    kinds: tuple[str, ...],
) -> tuple[list[LayerParams], int]:
    """Each layer's parameters (a block config's own per-block sizes when it has one; cross-attention
    layers with their own projections) and the MoE layer count."""
    per_layer, moe_layers = layer_params(cfg, family, layers, shape, mix)
    if blocks:
        per_layer = block_layer_params(cfg, family, shape, blocks)
    per_layer = [
        _cross(p, shape.attn_dim) if kind == CROSS else p for p, kind in zip(per_layer, kinds, strict=True)
    ]
    return per_layer, moe_layers


def _heads(
    config: dict[str, Any], cfg: dict[str, Any], family: str, vocab: int, h: int
) -> tuple[int, int, int, int]:
    """(embedding, lm_head, score head, final norm) parameters: a classification / reward model has a score
    head and no lm_head."""
    embed, lm_head, final = embeddings(config, cfg, family, vocab, h)
    score = score_head(config, h)
    lm_head, head = (0, score) if score is not None else (lm_head, 0)
    return embed, lm_head, head, final


def _rope_cache(cfg: dict[str, Any], family: str, rotary_dim: int) -> int:
    """Elements of the RoPE cos/sin cache; MPT attends with ALiBi slopes (vLLM MPTAttention asserts
    attn_config.alibi): no RoPE cache."""
    return 0 if family == "mpt" else rope_cache_elems(cfg, family, rotary_dim)


def parse_config(
    config: dict[str, Any],
    model_id: str,
    source: str,
    hf_quant: dict[str, Any] | None = None,
    checkpoint_bytes: int | None = None,
    checkpoint_source: str = "",
) -> ModelArch:
    """Build a ModelArch from a config dict. Raises ConfigError naming the missing key."""
    config, cfg, family = _text_config(config)
    layers = need(cfg, "num_hidden_layers", "n_layer", "num_layers")
    h = need(cfg, "hidden_size", "n_embd", "d_model")
    nq = need(cfg, "num_attention_heads", "n_head")
    nkv = _kv_heads(cfg, family, nq)
    vocab = need(cfg, "vocab_size", "padded_vocab_size")
    mla, head_dim, attn_dim = _head_dims(cfg, h, nq)
    max_len, max_note = _max_context(cfg, family)
    window, kinds = window_and_kinds(cfg, family, layers)
    experts, top_k, dense_inter, moe_inter = mlp_sizes(cfg, family, h)
    blocks, nkv = _blocks(cfg, layers, h, nq, nkv)
    if blocks:
        kinds = tuple(k if b.attention == "attention" else NONE for k, b in zip(kinds, blocks, strict=True))
        dense_inter = max(b.intermediate for b in blocks) or dense_inter  # the widest MLP sets the peak
    gated = family not in UNGATED
    shape = Shape(h, nq, nkv, attn_dim, experts, dense_inter, moe_inter, 3 if gated else 2)
    mix = mixers(cfg, family, layers)
    per_layer, moe_layers = _layer_params(cfg, family, layers, shape, mix, blocks, kinds)
    dtype = dtype_of(cfg)
    state = _hybrid_state(cfg, mix, shape, dtype)
    notes = _notes(cfg, family, mla, head_dim) + ((state_note(mix, state),) if mix and state else ())
    embed, lm_head, head, final = _heads(config, cfg, family, vocab, h)
    with_vision = with_vision_defaults(config)
    vision, vision_note = vision_params(with_vision, h)
    enc_tokens, enc_note = encoder_tokens(config) if CROSS in kinds else (0, "")
    notes += (enc_note,) if enc_note else ()
    mla_fields = {**_mla_fields(cfg), **_dsa_fields(cfg)} if mla else {}
    return ModelArch(
        id=model_id,
        source=source,
        family=family or "unknown",
        layers=layers,
        hidden_size=h,
        query_heads=nq,
        kv_heads=1 if mla else nkv,
        head_dim=head_dim,
        vocab_size=vocab,
        max_positions=max_len,
        max_positions_note=max_note,
        config_positions=config_max_len(cfg),
        layer_kinds=kinds,
        sliding_window=window,
        attention_chunk_size=int(cfg["attention_chunk_size"]) if CHUNKED in kinds else None,
        mla=mla,
        intermediate_size=dense_inter,
        num_experts=experts,
        experts_per_token=top_k,
        moe_intermediate_size=moe_inter if experts else 0,
        moe_layers=moe_layers,
        dtype=dtype,
        quant=read_quant(cfg, hf_quant),
        embed_params=embed,
        lm_head_params=lm_head,
        head_params=head,
        layer_params=tuple(per_layer),
        final_params=final,
        vision_params=vision,
        vision_note=vision_note,
        vision_layers=_vision_int(with_vision, "num_hidden_layers"),
        vision_hidden=_vision_int(with_vision, "hidden_size"),
        mtp_params=mtp_params(cfg, per_layer[-1], h),
        rope_cache_elems=_rope_cache(cfg, family, attn_dim if not mla else head_dim),
        checkpoint_bytes=checkpoint_bytes,
        checkpoint_bytes_source=checkpoint_source,
        gated_mlp=gated,
        notes=notes,
        state_bytes_per_seq=state,
        state_ssm_elems=_ssm_elems(cfg, mix, shape, dtype) if state else 0,
        state_ssm_width=ssm_width(cfg, _DTYPE_BYTES.get(dtype, 2.0)) if state else 0.0,
        state_layers=tuple(i for i, m in enumerate(mix or ()) if m in STATEFUL) if state else (),
        encoder_tokens=enc_tokens,
        facts={"kv_heads_query_heads": f"{nkv} KV heads, {nq} query heads"},
        parsed_from=(config, model_id, source, hf_quant, checkpoint_bytes, checkpoint_source),
        **mla_fields,
    )


__all__ = ["ConfigError", "KEEP_KEYS", "compact", "parse_config", "read_quant", "text_part"]
