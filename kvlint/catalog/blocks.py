"""Heterogeneous decoder layers: Nemotron-NAS (DeciLM) `block_configs`, one entry per layer.

A NAS-pruned model (nvidia/Llama-3_3-Nemotron-Super-49B-v1, ...-Ultra-253B-v1) states each layer's
attention and FFN on its own: attention `no_op` (no attention, no KV cache, no input norm), or
`n_heads_in_group` (KV heads = num_attention_heads // n_heads_in_group), or `replace_with_linear` (one
hidden x hidden matrix, no KV); FFN `no_op`, `replace_with_linear`, or a SwiGLU MLP whose width is
`ffn_mult` times the hidden size. Read as vLLM builds them (vllm-project/vllm@00bd1493
vllm/model_executor/models/nemotron_nas.py): `_ffn_mult_to_intermediate_size` = int(2 x ffn_mult x
hidden / 3) rounded up to a multiple of 256; `DeciLMDecoderLayer.__init__` builds `self_attn` and
`input_layernorm` only when the attention is not a no-op, `mlp` and `post_attention_layernorm` only
when the FFN is not; `DeciModel.forward` counts a KV cache only for layers with attention.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class BlockError(ValueError):
    """A block config kvlint cannot read (hf_config reports it as a ConfigError: hf_keys imports this
    module's compact_blocks, so this module cannot import hf_keys)."""


class Block(NamedTuple):
    attention: str  # "attention", "linear" or "none"
    kv_heads: int  # 0 unless attention
    ffn: str  # "mlp", "linear" or "none"
    intermediate: int  # 0 unless mlp


_ATTN_KEEP = ("no_op", "replace_with_linear", "n_heads_in_group")
_FFN_KEEP = ("no_op", "replace_with_linear", "ffn_mult", "intermediate_size")


def compact_blocks(value: list[Any]) -> list[Any]:
    """The part of each block config kvlint reads (what the compact catalog copy keeps)."""
    out: list[Any] = []
    for block in value:
        if not isinstance(block, dict):
            out.append(block)
            continue
        kept: dict[str, Any] = {}
        for part, keep in (("attention", _ATTN_KEEP), ("ffn", _FFN_KEEP)):
            body = block.get(part)
            if isinstance(body, dict):
                kept[part] = {k: body[k] for k in keep if body.get(k) is not None}
        out.append(kept)
    return out


def ffn_intermediate(ffn_mult: float, hidden: int) -> int:
    """vLLM nemotron_nas.py `_ffn_mult_to_intermediate_size`: int(2 x mult x hidden / 3), up to 256."""
    size = int(2 * ffn_mult * hidden / 3)
    return -(-size // 256) * 256


def _attention(body: dict[str, Any], heads: int, i: int) -> tuple[str, int]:
    if body.get("no_op"):
        return "none", 0
    if body.get("replace_with_linear"):
        return "linear", 0
    group = body.get("n_heads_in_group")
    if not (isinstance(group, int) and not isinstance(group, bool) and group > 0 and heads % group == 0):
        raise BlockError(
            f"block_configs[{i}].attention.n_heads_in_group is {group!r}: expected a whole divisor of "
            f"num_attention_heads ({heads})"
        )
    return "attention", heads // group


def _ffn(body: dict[str, Any], hidden: int, i: int) -> tuple[str, int]:
    if body.get("no_op"):
        return "none", 0
    if body.get("replace_with_linear"):
        return "linear", 0
    mult, size = body.get("ffn_mult"), body.get("intermediate_size")
    if isinstance(mult, (int, float)) and not isinstance(mult, bool) and mult > 0:
        return "mlp", ffn_intermediate(float(mult), hidden)
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return "mlp", size
    raise BlockError(f"block_configs[{i}].ffn states neither ffn_mult nor intermediate_size")


def read_blocks(cfg: dict[str, Any], layers: int, hidden: int, heads: int) -> tuple[Block, ...] | None:
    """Each layer's block, or None when the config has no block_configs."""
    value = cfg.get("block_configs")
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != layers:
        size = len(value) if isinstance(value, list) else type(value).__name__
        raise BlockError(f"block_configs has {size} entries: expected one per layer ({layers})")
    blocks = []
    for i, block in enumerate(value):
        if not isinstance(block, dict):
            raise BlockError(f"block_configs[{i}] is not an object")
        attn, ffn = block.get("attention"), block.get("ffn")
        attn, ffn = (attn if isinstance(attn, dict) else {}), (ffn if isinstance(ffn, dict) else {})
        kind, kv = _attention(attn, heads, i)
        blocks.append(Block(kind, kv, *_ffn(ffn, hidden, i)))
    return tuple(blocks)


def uniform_kv_heads(blocks: tuple[Block, ...]) -> int | None:
    """The KV heads every attention layer has (None: no attention layer). Layers with different KV
    heads would need a KV size per layer, which kvlint's plan does not carry: refused, not guessed."""
    heads = {b.kv_heads for b in blocks if b.attention == "attention"}
    if len(heads) > 1:
        raise BlockError(
            f"kvlint cannot price this model yet: its attention layers have different KV heads "
            f"({', '.join(str(h) for h in sorted(heads))}) and kvlint sizes the KV cache with one count"
        )
    return heads.pop() if heads else None
