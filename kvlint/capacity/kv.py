"""KV-cache bytes per token, per layer kind, per GPU; block pages; pipeline-parallel layer split.

Sources (vLLM): vllm/v1/kv_cache_interface.py (page sizes per spec), vllm/config/model.py
get_num_kv_heads (`max(1, total_kv_heads // tp)`, MLA = 1), vllm/distributed/utils.py
get_pp_indices (layer split), vllm/v1/core/kv_cache_utils.py (grouping, blocks, concurrency).
"""

from __future__ import annotations

from kvlint.catalog.arch import CHUNKED, CROSS, FULL, NONE, SLIDING, ModelArch
from kvlint.record import record

# A layer that holds one fixed state per running request (Mamba / linear attention; kvlint.capacity.state)
MAMBA = "mamba"
MAMBA_ALIGN = "mamba_align"  # the same with vLLM's prefix caching, mamba_cache_mode align / all
MAMBA_ALL = "mamba_all"
STATE_KINDS = (MAMBA, MAMBA_ALIGN, MAMBA_ALL)

DTYPE_BYTES = {
    "float32": 4.0,
    "fp32": 4.0,
    "float": 4.0,
    "bfloat16": 2.0,
    "bf16": 2.0,
    "float16": 2.0,
    "fp16": 2.0,
    "half": 2.0,
    "fp8": 1.0,
    "fp8_e4m3": 1.0,
    "fp8_e5m2": 1.0,
    "fp8_inc": 1.0,
    "fp8_ds_mla": 1.0,
    "int8": 1.0,
    "int8_per_token_head": 1.0,
    "fp8_per_token_head": 1.0,
    "nvfp4": 0.5625,  # 4-bit values + one fp8 scale per 16 (head/2 + head/16 bytes per head)
}


def run_dtype(checkpoint_dtype: str, stated: str | None = None) -> str:
    """The dtype the engine runs the model in: a stated --dtype, else the checkpoint's, except that
    `auto` downcasts a float32 checkpoint to float16 (vLLM config.py _get_and_verify_dtype "we use
    float16 for float32 models"; SGLang's copy, sglang 0.4.3 configs/model_config.py:339-347, bfloat16
    for Gemma 2; TGI's --dtype offers only float16 / bfloat16). The KV cache's `auto` is this dtype."""
    if stated and stated.lower() != "auto":
        return stated
    return "float16" if DTYPE_BYTES.get(checkpoint_dtype.lower(), 2.0) > 2 else checkpoint_dtype


def kv_dtype_bytes(kv_cache_dtype: str | None, model_dtype: str) -> float:
    """`auto` stores the KV cache in the dtype the model runs in (run_dtype); fp8 variants take one
    byte per value."""
    name = (kv_cache_dtype or "auto").lower()
    if name == "auto":
        return DTYPE_BYTES.get(model_dtype.lower(), 2.0)
    return DTYPE_BYTES.get(name, 2.0)


def kv_heads_per_gpu(arch: ModelArch, tp: int) -> int:
    """vLLM get_num_kv_heads: MLA keeps one latent (replicated on every rank); else split, never below 1."""
    if arch.mla:
        return 1
    return max(1, arch.kv_heads // max(1, tp))


def bytes_per_token_layer(arch: ModelArch, tp: int, kv_bytes: float) -> int:
    """KV bytes one token costs in one attention layer on one GPU (K and V; MLA has one latent)."""
    heads = kv_heads_per_gpu(arch, tp)
    factor = 1 if arch.mla else 2
    return int(factor * heads * arch.head_dim * kv_bytes)


def page_bytes(arch: ModelArch, tp: int, kv_bytes: float, block_size: int) -> int:
    """One block of one layer: AttentionSpec.page_size_bytes."""
    return block_size * bytes_per_token_layer(arch, tp, kv_bytes)


def pp_partitions(layers: int, pp: int) -> list[int]:
    """vLLM get_pp_indices: even split, the remainder going to the partitions before the last."""
    pp = max(1, pp)
    parts = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        parts[-i] += 1
    return parts


def stage_kinds(arch: ModelArch, pp: int) -> list[tuple[str, ...]]:
    """The attention layer kinds on each pipeline stage."""
    out, start = [], 0
    for n in pp_partitions(arch.layers, pp):
        out.append(tuple(k for k in arch.layer_kinds[start : start + n] if k != NONE))
        start += n
    return out


@record(frozen=True)
class KvGroups:
    """How vLLM's KV cache manager groups one stage's layers (all groups share one block pool)."""

    group_size: int  # layers per group (padding layers included)
    groups: tuple[tuple[str, int], ...]  # (kind, number of groups of that kind)
    padding_layers: int

    @property
    def num_groups(self) -> int:
        return sum(n for _, n in self.groups)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def group_layers(kinds: tuple[str, ...], hybrid: bool) -> KvGroups:
    """vllm/v1/core/kv_cache_utils.py: with the hybrid manager, layers of each kind are cut into
    groups of `group_size` = min layers per kind (or the max if max < 1.5 x min), padding short
    groups; without it, sliding/chunked layers are promoted to full attention (one group)."""
    if not kinds:
        return KvGroups(0, (), 0)
    if not hybrid:
        return KvGroups(len(kinds), ((FULL, 1),), 0)
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    if len(counts) == 1:
        ((kind, n),) = counts.items()
        return KvGroups(n, ((kind, 1),), 0)
    lo, hi = min(counts.values()), max(counts.values())
    size = hi if hi < 1.5 * lo else lo
    groups = tuple((kind, cdiv(n, size)) for kind, n in counts.items())
    padding = sum(cdiv(n, size) * size - n for n in counts.values())
    return KvGroups(size, groups, padding)


def blocks_per_request(
    kind: str, max_len: int, block_size: int, window: int | None, batched: int, encoder_tokens: int = 0
) -> int:
    """max_memory_usage_bytes / page_size for one request at max_len, per spec kind (a state layer:
    one page, MambaSpec with mamba_cache_mode "none"). A cross-attention layer holds the request's
    encoder tokens whatever its text length (CrossAttentionSpec: cdiv(max_num_encoder_input_tokens,
    block_size); for an encoder-decoder model vLLM sets max_num_encoder_input_tokens to the largest
    encoder input, get_encdec_max_encoder_len)."""
    if kind == MAMBA:
        return 1
    if kind == MAMBA_ALIGN:  # the running state plus the last block-aligned checkpoint
        return 2
    if kind == MAMBA_ALL:  # a checkpoint at every block boundary
        return cdiv(max_len, block_size)
    if kind == CROSS:
        return cdiv(encoder_tokens, block_size)
    if kind == SLIDING and window:
        return cdiv(min(window - 1 + batched, max_len), block_size) + 1
    if kind == CHUNKED and window:
        return cdiv(min(window + batched, max_len), block_size)
    return cdiv(max_len, block_size)


def request_blocks(
    groups: KvGroups, max_len: int, block_size: int, window: int | None, batched: int, encoder_tokens: int = 0
) -> int:
    """Blocks one request of max_len tokens takes, over every KV-cache group. When one block spans every
    layer (V0's CacheEngine allocates a tensor per layer of get_num_layers, cross-attention layers
    included), the encoder tokens take blocks of their own beside the text's (V0
    block_manager.can_allocate adds the encoder sequence's get_num_required_blocks)."""
    n = sum(
        k * blocks_per_request(kind, max_len, block_size, window, batched, encoder_tokens)
        for kind, k in groups.groups
    )
    if encoder_tokens and groups.groups and all(kind != CROSS for kind, _ in groups.groups):
        n += cdiv(encoder_tokens, block_size)
    return n


def text_token_layers(kinds: tuple[str, ...], hybrid: bool) -> int:
    """Layers that take KV for every text token: all of them when one block spans every layer; with the
    hybrid manager, cross-attention layers hold encoder tokens only; state layers hold none."""
    return sum(1 for k in kinds if k not in STATE_KINDS and not (hybrid and k == CROSS))


def cross_note(arch: ModelArch, hybrid: bool) -> str | None:
    if not arch.cross_layers:
        return None
    where = (
        "a KV-cache group of their own holding the request's encoder tokens (CrossAttentionSpec)"
        if hybrid
        else "a slot in every block, and each request's encoder tokens take blocks of their own (V0 encoder-decoder)"
    )
    return f"{arch.cross_layers} cross-attention layers ({arch.encoder_tokens:,} image tokens per request): {where}"


def kv_bytes_per_token_full(arch: ModelArch, tp: int, kv_bytes: float, layers: int | None = None) -> int:
    """Per-GPU KV bytes per token if every layer held the full context (the course formula per GPU)."""
    n = arch.attention_layers if layers is None else layers
    return n * bytes_per_token_layer(arch, tp, kv_bytes)


__all__ = [
    "CHUNKED",
    "CROSS",
    "FULL",
    "SLIDING",
    "MAMBA",
    "MAMBA_ALIGN",
    "MAMBA_ALL",
    "STATE_KINDS",
    "KvGroups",
    "blocks_per_request",
    "cross_note",
    "request_blocks",
    "text_token_layers",
    "bytes_per_token_layer",
    "cdiv",
    "group_layers",
    "kv_bytes_per_token_full",
    "kv_dtype_bytes",
    "kv_heads_per_gpu",
    "page_bytes",
    "pp_partitions",
    "run_dtype",
    "stage_kinds",
]
