"""SGLang's memory accounting (python/sglang/srt/server_args.py, model_runner.py profile_max_num_token).

mem_fraction_static = (weights + KV pool) / GPU memory; its default comes from the GPU's size:
    reserved = 512 + max(chunked_prefill_size, 2048) x 1.5 + cuda_graph_max_bs x 2 + tp x pp / 8 x 1024  (MB)
    (at least 10 GiB on GPUs over 60 GiB);  mem_fraction_static = round((gpu_mem - reserved) / gpu_mem, 3)
KV pool = free memory before loading x mem_fraction_static - weights
max_total_num_tokens = KV pool // cell, cell = kv_heads/GPU x head_dim x layers x 2 x bytes
                                           (MLA: (kv_lora_rank + qk_rope_head_dim) x layers x bytes)
"""

from __future__ import annotations

from kvlint.capacity.kv import bytes_per_token_layer, kv_dtype_bytes, pp_partitions
from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.units import GIB, gib, tokens

MB = 1 << 20
# CUDA context and allocator state present before weights load; SGLang measures free memory after it.
CONTEXT_BYTES = int(0.5 * GIB)


def _tier(gpu_mb: float, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) by GPU memory (ServerArgs._handle_gpu_memory_settings)."""
    if gpu_mb < 20 * 1024:
        return 2048, 8
    if gpu_mb < 35 * 1024:
        return 2048, 24 if tp < 4 else 80
    if gpu_mb < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mb < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def default_mem_fraction(gpu_bytes: int, tp: int, pp: int, chunked: int, graph_bs: int) -> float:
    gpu_mb = gpu_bytes / MB
    reserved = 512 + max(chunked, 2048) * 1.5 + graph_bs * 2 + tp * pp / 8 * 1024
    if gpu_mb > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mb - reserved) / gpu_mb, 3)


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    from kvlint.deployment import default

    tp = int(d.tensor_parallel.value) if d.tensor_parallel else 1
    pp = int(d.pipeline_parallel.value) if d.pipeline_parallel else 1
    if d.tensor_parallel is None:
        d.tensor_parallel = default(1, "SGLang default --tp 1")
    if d.pipeline_parallel is None:
        d.pipeline_parallel = default(1, "SGLang default --pp 1")
    if d.max_context is None:
        d.max_context = default(
            arch.max_positions,
            f"SGLang context_length derived from the model config ({arch.max_positions_note})",
        )
    gpu_bytes = gpu.engine_bytes if gpu and gpu.engine_bytes else 0
    chunked, graph_bs = _tier(gpu_bytes / MB, tp) if gpu_bytes else (4096, 160)
    if "chunked_prefill_size" not in d.extra:
        d.extra["chunked_prefill_size"] = default(
            chunked, "SGLang default chunked_prefill_size for this GPU's memory"
        )
    if "mem_fraction_static" not in d.extra:
        mfs = (
            default_mem_fraction(gpu_bytes, tp, pp, int(d.extra["chunked_prefill_size"].value), graph_bs)
            if gpu_bytes
            else 0.88
        )
        d.extra["mem_fraction_static"] = default(
            mfs, "SGLang default mem_fraction_static for this GPU's memory"
        )
    if d.kv_cache_dtype is None:
        d.kv_cache_dtype = default("auto", "SGLang default kv_cache_dtype auto")
    max_running = int(d.max_sequences.value) if d.max_sequences else 0
    return EngineSettings(
        engine="sglang",
        version=version_text,
        generation="-",
        tp=tp,
        pp=pp,
        dp=int(d.data_parallel.value) if d.data_parallel else 1,
        max_model_len=int(d.max_context.value),
        max_num_seqs=max_running,
        max_batched_tokens=int(d.extra["chunked_prefill_size"].value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=str(d.kv_cache_dtype.value),
        utilization=float(d.extra["mem_fraction_static"].value),
        block_size=1,
        enforce_eager=False,
        hybrid_kv_cache_manager=False,
        chunked_prefill=True,
        extra={k: v.value for k, v in d.extra.items()},
    )


def plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    w = weight_bytes(arch, s.tp, s.pp, s.dtype, s.quantization)
    kv_bytes = kv_dtype_bytes(s.kv_cache_dtype, arch.dtype)
    free_before = total - CONTEXT_BYTES
    budget = int(free_before * s.utilization)
    layers = max(pp_partitions(arch.attention_layers, s.pp))
    cell = bytes_per_token_layer(arch, s.tp, kv_bytes) * layers
    stage_weights = w.per_gpu_max
    pool = budget - stage_weights
    limit = s.extra.get("max_total_tokens")
    kv_tokens = max(0, pool) // cell if cell else 0
    if isinstance(limit, int) and limit > 0:
        kv_tokens = min(kv_tokens, limit)
    ctx = s.max_model_len
    req_pool = min(max(int(kv_tokens / max(1, ctx) * 512), 2048), 4096)
    max_running = s.max_num_seqs or min(max(1, kv_tokens // 2), req_pool)
    request = ctx * cell
    conc = kv_tokens / ctx if ctx else 0.0
    p = Plan(
        engine="sglang",
        generation="-",
        gpu_total=total,
        utilization=s.utilization,
        budget=budget,
        terms=[Term("weights", stage_weights, w.source)],
        kv_pool=pool,
        kv_per_token=cell,
        page_bytes=cell,
        block_size=1,
        layers_per_block=layers,
        num_blocks=kv_tokens,
        kv_tokens=kv_tokens,
        max_model_len=ctx,
        max_num_seqs=max_running,
        request_bytes=request,
        max_concurrency=conc,
        max_len_that_fits=kv_tokens,
        context_at_max_seqs=kv_tokens // max_running if max_running else 0,
        weights_per_gpu=stage_weights,
        weights_total=w.total,
        weights_source=w.source,
    )
    p.lines = [
        f"free GPU memory before loading: {gib(total)} - {gib(CONTEXT_BYTES)} (CUDA context) = {gib(free_before)}",
        f"x mem_fraction_static {s.utilization:g} = {gib(budget)} for weights + KV pool",
        f"  - weights: {gib(stage_weights)}  ({w.source})",
        f"  = KV pool per GPU: {gib(pool)}",
        f"cell per token: {cell:,} B ({layers} layers) -> max_total_num_tokens {tokens(kv_tokens)}",
        f"max_running_requests {max_running:,}"
        + ("" if s.max_num_seqs else " (SGLang default: min(tokens // 2, request pool))"),
    ]
    return p
