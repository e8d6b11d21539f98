"""TGI's memory accounting (server/text_generation_server/models/flash_causal_lm.py warmup).

    free = total x CUDA_MEMORY_FRACTION x TGI_WIGGLE_ROOM (0.90) - weights - prefill warm-up peak
    num_blocks = free // (layers x BLOCK_SIZE x kv_heads/GPU x head_dim x 2 x bytes)
    max_batch_total_tokens = num_blocks x BLOCK_SIZE        ("Inferred max batch total tokens")
Defaults (launcher/src/main.rs): max_total_tokens = min(max_position_embeddings, ...),
max_input_tokens = max_total_tokens - 1, max_batch_prefill_tokens = 4096, max_concurrent_requests = 128,
CUDA_MEMORY_FRACTION = 1.0. BLOCK_SIZE 1 with flashinfer (the default on CUDA).
"""

from __future__ import annotations

from kvlint.capacity.kv import bytes_per_token_layer, kv_dtype_bytes
from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.units import gib, tokens

WIGGLE_ROOM = 0.90  # server-side TGI_WIGGLE_ROOM


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    from kvlint.deployment import default

    if d.tensor_parallel is None:
        d.tensor_parallel = default(1, "TGI default --num-shard 1")
    if d.max_context is None:
        # launcher: "Default to min(max_allocatable, max_position_embeddings)"; the plan applies the min.
        d.max_context = default(
            arch.max_positions,
            "TGI default max_total_tokens = min(what the KV cache holds, max_position_embeddings)",
        )
        d.extra["max_total_tokens_default"] = default(True, "TGI caps max_total_tokens to the KV cache")
    if "max_batch_prefill_tokens" not in d.extra:
        d.extra["max_batch_prefill_tokens"] = default(
            min(4096, arch.max_positions), "TGI default max_batch_prefill_tokens 4096"
        )
    if "max_input_tokens" not in d.extra:
        d.extra["max_input_tokens"] = default(
            int(d.max_context.value) - 1, "TGI default max_input_tokens = max_total_tokens - 1"
        )
    if d.max_sequences is None:
        d.max_sequences = default(128, "TGI default max_concurrent_requests 128")
    if "cuda_memory_fraction" not in d.extra:
        d.extra["cuda_memory_fraction"] = default(1.0, "TGI default CUDA_MEMORY_FRACTION 1.0")
    return EngineSettings(
        engine="tgi",
        version=version_text,
        generation="-",
        tp=int(d.tensor_parallel.value),
        pp=1,
        dp=1,
        max_model_len=int(d.max_context.value),
        max_num_seqs=int(d.max_sequences.value),
        max_batched_tokens=int(d.extra["max_batch_prefill_tokens"].value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=str(d.kv_cache_dtype.value) if d.kv_cache_dtype else "auto",
        utilization=float(d.extra["cuda_memory_fraction"].value),
        block_size=1,
        enforce_eager=False,
        hybrid_kv_cache_manager=False,
        chunked_prefill=True,
        extra={k: v.value for k, v in d.extra.items()},
    )


def plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    w = weight_bytes(arch, s.tp, 1, s.dtype, s.quantization, engine="tgi")
    kv_bytes = kv_dtype_bytes(s.kv_cache_dtype, arch.dtype)
    budget = int(total * s.utilization * WIGGLE_ROOM)
    prefill = int(
        s.max_batched_tokens * (arch.hidden_size * 8 + 3 * arch.intermediate_size // max(1, s.tp)) * 2
    )
    terms = [
        Term("weights", w.per_gpu_max, w.source),
        Term(
            "prefill warm-up",
            prefill,
            f"warm-up prefill of {tokens(s.max_batched_tokens)} tokens (activations)",
        ),
    ]
    pool = budget - sum(t.bytes for t in terms)
    per_token = bytes_per_token_layer(arch, s.tp, kv_bytes) * arch.attention_layers
    kv_tokens = max(0, pool) // per_token if per_token else 0
    declared = s.extra.get("max_batch_total_tokens")
    ctx = s.max_model_len
    if s.extra.get("max_total_tokens_default") and kv_tokens > 0:
        ctx = min(ctx, kv_tokens)
    p = Plan(
        engine="tgi",
        generation="-",
        gpu_total=total,
        utilization=s.utilization,
        budget=budget,
        terms=terms,
        kv_pool=pool,
        kv_per_token=per_token,
        page_bytes=per_token,
        block_size=1,
        layers_per_block=arch.attention_layers,
        num_blocks=kv_tokens,
        kv_tokens=kv_tokens,
        max_model_len=ctx,
        max_num_seqs=s.max_num_seqs,
        request_bytes=ctx * per_token,
        max_concurrency=kv_tokens / ctx if ctx else 0.0,
        max_len_that_fits=kv_tokens,
        context_at_max_seqs=kv_tokens // s.max_num_seqs if s.max_num_seqs else 0,
        weights_per_gpu=w.per_gpu_max,
        weights_total=w.total,
        weights_source=w.source,
        load_budget=int(total * s.utilization),
    )
    p.lines = [
        f"GPU memory: {gib(total)} x CUDA_MEMORY_FRACTION {s.utilization:g} x wiggle room {WIGGLE_ROOM} = {gib(budget)}",
        *(f"  - {t.label}: {gib(t.bytes)}  ({t.note})" for t in terms),
        f"  = KV pool per GPU: {gib(pool)}",
        f"KV per token per GPU: {per_token:,} B -> max_batch_total_tokens {tokens(kv_tokens)}",
    ]
    if isinstance(declared, int):
        p.notes.append(
            f"max_batch_total_tokens {declared:,} is stated; flash models ignore it and infer their own"
        )
    return p
