"""LMDeploy's KV cache on one GPU, as its two engines size it (InternLM/lmdeploy, tags as named).

TurboMind (the default backend) loads the weights, then builds the engine, whose first act sizes the KV
cache (v0.7.0 src/turbomind/models/llama/LlamaBatch.cc:963-987; v0.12.0 src/turbomind/engine/engine.cc:215-246):
    free        = cudaMemGetInfo free, the smallest over the TP ranks (BlockManager.cc GetSyncFreeMemSize)
    block bytes = layers x local KV heads x 2 x block_len x (head_dim x bits / 8 + param bytes)
                  (src/turbomind/kernels/attention/block.h Layout::block_size: `head_num * 2 *
                  head_data_size() + head_num * 2 * head_param_size()`; bits 16, or quant_policy's 8 / 4
                  with an fp16 scale and zero per token and head: token_param_size `t_bits * 2 / 8`)
    max_block_count = free x cache_max_entry_count // block bytes (BlockManager.cc GetBlockCount; of the
                  total memory instead in v0.2.0-v0.2.1), logged "[BlockManager] max_block_count = N"
and `session_len` is cut to max_block_count x block_len when it is longer ("No enough blocks for
`session_len` (%d), `session_len` truncated to %d.", LlamaBatch.cc:989-997). The activation buffers are
allocated after the cache, from what the share leaves.
The PyTorch engine (v0.7.0 lmdeploy/pytorch/engine/model_agent.py:29-108 _update_cache_config; v0.10.0
lmdeploy/pytorch/engine/executor/base.py:130-188 update_configs) takes a runtime reserve for the logits
off the free memory first, then `num_gpu_blocks = int((free - runtime) x cache_max_entry_count /
cache_block_size)`, and serves at most `num_gpu_blocks x block_size - block_size` tokens a session
(pytorch/engine/engine.py _get_max_session_len).
The memory outside the weights and the cache when free memory is read (CUDA context, cuBLAS and NCCL
workspaces) is kvlint's estimate, said so.
"""

from __future__ import annotations

from kvlint.capacity.kv import bytes_per_token_layer, kv_dtype_bytes, kv_heads_per_gpu, run_dtype
from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.base import LongSequence, Startup
from kvlint.engines.lmdeploy.releases import default as release_default
from kvlint.engines.lmdeploy.releases import parse_version
from kvlint.units import GIB, gib, tokens

# CUDA context, cuBLAS/cuBLASLt workspaces and NCCL buffers held when the engine reads free memory
# (kvlint's estimate, benchmarks/calibration/lmdeploy_startup_logs.yaml)
CONTEXT_BYTES = int(0.75 * GIB)
PARAM_BYTES = 4  # int4/int8 KV: an fp16 scale and zero per token, head, K or V (block.h token_param_size)
KV_BITS = {"int4": 4, "int8": 8}
MIN_BLOCKS = 16  # the PyTorch engine halves max_prefill_token_num until 16 blocks fit (executor/base.py)


def truncated_says(version: tuple[int, ...] | None, session_len: int, to: int) -> str:
    """TurboMind's warning when it cuts session_len (LlamaBatch.cc up to v0.11; engine.cc from v0.12.0)."""
    if version is None or version >= (0, 12):
        return f"`session_len` truncated to {to} due to limited KV cache memory"
    return f"No enough blocks for `session_len` ({session_len}), `session_len` truncated to {to}."


def kv_per_token(arch: ModelArch, s: EngineSettings) -> int:
    """KV bytes one token costs on one GPU, all attention layers (with int4/int8's scales and zeros)."""
    layers = arch.attention_layers
    bits = KV_BITS.get(s.kv_cache_dtype)
    if bits is None:
        per_layer = bytes_per_token_layer(
            arch, s.tp, kv_dtype_bytes(s.kv_cache_dtype, run_dtype(arch.dtype, s.dtype))
        )
        return per_layer * layers
    heads = kv_heads_per_gpu(arch, s.tp)
    factor = 1 if arch.mla else 2
    return layers * factor * heads * (arch.head_dim * bits // 8 + PARAM_BYTES)


def runtime_reserve(arch: ModelArch, s: EngineSettings, free: int, block_bytes: int) -> tuple[int, int]:
    """The PyTorch engine's logits reserve and the prefill tokens it settles on (halved until 16 blocks fit)."""
    rule = release_default("runtime_reserve", s.version).value
    prefill = s.max_batched_tokens
    reserve = 0
    while prefill > 0:
        if rule == "vocab2":
            reserve = (prefill + 2 * s.max_num_seqs) * arch.vocab_size * 2
        else:
            reserve = prefill * arch.vocab_size * 7
        if block_bytes and int((free - reserve) * s.utilization) // block_bytes >= MIN_BLOCKS:
            break
        prefill //= 2
    return reserve, prefill


def long_sequence(s: EngineSettings, kv_tokens: int) -> LongSequence:
    """What the engine does when one session_len sequence does not fit the blocks it allocated."""
    if s.extra.get("backend") == "pytorch":
        return LongSequence(Startup.SHRINKS, "", max(0, kv_tokens - s.block_size))
    row = release_default("long_sequence", s.version)
    if row.value == "shrinks":
        return LongSequence(
            Startup.SHRINKS, truncated_says(parse_version(s.version), s.max_model_len, kv_tokens), kv_tokens
        )
    return LongSequence(Startup.CAPS, "cache out of memory, no request can be admitted")


def plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    pytorch = s.extra.get("backend") == "pytorch"
    w = weight_bytes(arch, s.tp, 1, s.dtype, None, engine="lmdeploy")
    per_token = kv_per_token(arch, s)
    block = max(1, s.block_size)
    block_bytes = per_token * block
    terms = [
        Term("weights", w.per_gpu_max, w.source),
        Term("CUDA context", CONTEXT_BYTES, "CUDA context, cuBLAS and NCCL workspaces (kvlint's estimate)"),
    ]
    free = total - sum(t.bytes for t in terms)
    prefill = s.max_batched_tokens
    if pytorch:
        reserve, prefill = runtime_reserve(arch, s, free, block_bytes)
        terms.append(
            Term("runtime reserve", reserve, f"logits of {tokens(prefill)} prefill tokens (PyTorch engine)")
        )
        free -= reserve
    of_total = s.extra.get("cache_of") == "total"
    share = int((total if of_total else free) * s.utilization) if free > 0 else free
    num_blocks = max(0, share) // block_bytes if block_bytes else 0
    if s.utilization >= 1:  # before v0.4.1 a count of 1 or more is the block count (BlockManager.cc:33-39)
        share, num_blocks = int(s.utilization) * block_bytes, int(s.utilization)
    kv_tokens = num_blocks * block
    pool = num_blocks * block_bytes if share > 0 else share
    starts = long_sequence(s, kv_tokens)
    fits = starts.shrinks_to if starts.shrinks_to is not None else kv_tokens
    ctx = s.max_model_len
    p = Plan(
        engine="lmdeploy",
        generation=s.generation,
        gpu_total=total,
        utilization=1.0,  # the weights may take the whole GPU; the cache share is of what they leave (lines)
        budget=total,
        terms=terms,
        kv_pool=pool,
        kv_per_token=per_token,
        page_bytes=block_bytes,
        block_size=block,
        layers_per_block=arch.attention_layers,
        num_blocks=num_blocks,
        kv_tokens=kv_tokens,
        max_model_len=ctx,
        max_num_seqs=s.max_num_seqs,
        request_bytes=-(-ctx // block) * block_bytes,
        max_concurrency=kv_tokens / ctx if ctx else 0.0,
        max_len_that_fits=fits,
        context_at_max_seqs=num_blocks // max(1, s.max_num_seqs) * block,
        pool_units=num_blocks,
        request_units=-(-ctx // block),
        weights_per_gpu=w.per_gpu_max,
        weights_total=w.total,
        weights_source=w.source,
        startup=starts,
    )
    shown = f"{s.utilization:g}{s.utilization_default}"
    of = f"{gib(total)} total" if of_total else f"{gib(max(free, 0))} free after the weights"
    p.lines = [
        f"GPU memory: {gib(total)} ({s.extra['backend']}, LMDeploy {s.version or 'newest'})",
        *(f"  - {t.label}: {gib(t.bytes)}  ({t.note})" for t in terms),
        f"  = {gib(free)} free; --cache-max-entry-count {shown} of {of} = {gib(share)}"
        if free > 0 or of_total
        else f"  = {gib(free)}: nothing is free after the weights for the KV cache",
        f"KV per token per GPU: {per_token:,} B ({s.kv_cache_dtype}); block of {block} tokens: {block_bytes / (1 << 20):.1f} MiB",
        f"  -> {num_blocks:,} blocks = {tokens(kv_tokens)} tokens ({gib(pool)})",
    ]
    if pytorch and prefill <= 0:
        p.warmup_fails = (
            f"the PyTorch engine's runtime reserve leaves no room for {MIN_BLOCKS} KV blocks at any"
            " max_prefill_token_num: it stops with 'No enough gpu memory for runtime.'"
        )
        p.notes.append(p.warmup_fails)
    elif pytorch and prefill != s.max_batched_tokens:
        p.notes.append(
            f"the PyTorch engine lowers max_prefill_token_num to {prefill:,} ('No enough memory. update"
            " max_prefill_token_num')"
        )
    return p


__all__ = ["kv_per_token", "long_sequence", "plan"]
