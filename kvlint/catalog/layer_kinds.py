"""Which layers keep a full KV cache, a sliding window, a local chunk, or none (vLLM's KV cache specs)."""

from __future__ import annotations

from typing import Any

from kvlint.catalog.arch import CHUNKED, CROSS, FULL, NONE, SLIDING
from kvlint.catalog.hybrid import kv_kinds, mixers

# transformers' layer_types spellings -> the KV spec vLLM gives such a layer.
_TYPE_KIND = {
    "full_attention": FULL,
    "sliding_attention": SLIDING,
    "chunked_attention": CHUNKED,
    "attention": FULL,
    "linear_attention": NONE,
    "mamba": NONE,
    "mamba2": NONE,
    "conv": NONE,
}
_QWEN_WINDOWED = ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe")


def _llama4_kinds(cfg: dict[str, Any], layers: int) -> tuple[str, ...]:
    # Llama 4: layers with RoPE use chunked local attention; every `nope_layer_interval`-th (4th)
    # layer is a global NoPE layer (transformers Llama4TextConfig no_rope_layers default).
    nope = cfg.get("no_rope_layers")
    if isinstance(nope, list) and len(nope) == layers:
        return tuple(CHUNKED if flag else FULL for flag in nope)
    interval = cfg.get("nope_layer_interval") or 4
    return tuple(FULL if (i + 1) % interval == 0 else CHUNKED for i in range(layers))


def _windowed_kinds(cfg: dict[str, Any], family: str, layers: int) -> tuple[str, ...]:
    if family == "gemma2":  # transformers Gemma2: even layers slide, odd layers are global
        return tuple(SLIDING if i % 2 == 0 else FULL for i in range(layers))
    if family in ("gemma3", "gemma3_text"):
        pattern = cfg.get("sliding_window_pattern") or 6  # Gemma3TextConfig default: 5 local, 1 global
        return tuple(FULL if (i + 1) % pattern == 0 else SLIDING for i in range(layers))
    if family in _QWEN_WINDOWED:
        if not cfg.get("use_sliding_window"):
            return (FULL,) * layers  # vLLM get_sliding_window: Qwen2 with use_sliding_window false
        first_full = cfg.get("max_window_layers") or layers
        return tuple(SLIDING if i >= first_full else FULL for i in range(layers))
    return (SLIDING,) * layers  # Mistral-style: every layer windowed


def layer_kinds(cfg: dict[str, Any], family: str, layers: int, window: int | None) -> tuple[str, ...]:
    """The KV kind of every decoder layer, from a hybrid pattern, layer_types, Llama 4's chunking or
    the window pattern."""
    mix = mixers(cfg, family, layers)
    if mix:
        return kv_kinds(mix)
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return tuple(_TYPE_KIND.get(str(t), FULL) for t in types)
    if family.startswith("llama4") and cfg.get("attention_chunk_size"):
        return _llama4_kinds(cfg, layers)
    if not window:
        return (FULL,) * layers
    return _windowed_kinds(cfg, family, layers)


def _kv_shared(cfg: dict[str, Any], kinds: tuple[str, ...]) -> tuple[str, ...]:
    """The last `num_kv_shared_layers` layers (Gemma 3n / Gemma 4) attend with the KV of the last earlier layer of
    their type and hold none of their own (vLLM gemma4.py @001cabc1 Gemma4Attention passes
    kv_sharing_target_layer_name, and the KV-cache spec skips such layers)."""
    shared = cfg.get("num_kv_shared_layers")
    if not isinstance(shared, int) or isinstance(shared, bool) or shared <= 0 or shared >= len(kinds):
        return kinds
    return kinds[: len(kinds) - shared] + (NONE,) * shared


def unpriced_attention(cfg: dict[str, Any]) -> str | None:
    """Why kvlint cannot price this config's attention, or None: Gemma 4's full-attention layers have their own
    head size and KV heads (vLLM gemma4.py Gemma4DecoderLayer: global_head_dim, num_global_key_value_heads with
    attention_k_eq_v), which kvlint's one-size-per-model KV accounting does not carry yet."""
    head, heads = cfg.get("head_dim"), cfg.get("num_key_value_heads")
    global_head, global_heads = cfg.get("global_head_dim"), cfg.get("num_global_key_value_heads")
    if isinstance(global_head, int) and global_head != head:
        return f"its full-attention layers have their own head size (global_head_dim {global_head}, head_dim {head})"
    if cfg.get("attention_k_eq_v") and isinstance(global_heads, int) and global_heads != heads:
        return (
            f"its full-attention layers have their own KV heads (num_global_key_value_heads {global_heads})"
        )
    return None


def window_and_kinds(cfg: dict[str, Any], family: str, layers: int) -> tuple[int | None, tuple[str, ...]]:
    """The sliding window in force (None when no layer slides) and every layer's kind."""
    window = cfg.get("sliding_window")
    # vLLM get_hf_config_sliding_window: a config stating use_sliding_window false has no window, whatever
    # the family (Qwen2-VL, MiniCPM-V 2.6, MiMo); Qwen2Config's own default is false
    if cfg.get("use_sliding_window") is False or (
        family in _QWEN_WINDOWED and not cfg.get("use_sliding_window")
    ):
        window = None
    window = int(window) if isinstance(window, int) and not isinstance(window, bool) and window > 0 else None
    kinds = _kv_shared(cfg, layer_kinds(cfg, family, layers, window))
    cross = cfg.get("cross_attention_layers")  # mllama: these decoder layers attend to the image tokens
    if isinstance(cross, list) and cross:
        marked = {i for i in cross if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers}
        kinds = tuple(CROSS if i in marked else k for i, k in enumerate(kinds))
    if SLIDING not in kinds:
        window = None if not cfg.get("layer_types") else window
    return window, kinds
