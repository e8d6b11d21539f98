"""TGI's memory accounting, from its source (huggingface/text-generation-inference, tags v1.0.0-v3.3.7).

server/text_generation_server/models/flash_causal_lm.py `warmup`: a prefill of
max_batch_prefill_tokens runs first (its peak stays in PyTorch's cache), then
    v2.3 and later: free = mem_get_info free - (1 - CUDA_MEMORY_FRACTION x TGI_WIGGLE_ROOM) x total
    up to v2.2:     free = 0.95 x (mem_get_info free - (1 - CUDA_MEMORY_FRACTION) x total)
    num_blocks = free // (layers x BLOCK_SIZE x kv_heads/GPU x head_dim x 2 x bytes) + warm-up blocks
    "KV-cache blocks: N, size: BLOCK_SIZE"; the router logs "Setting max batch total tokens to N x BLOCK_SIZE".
TGI_WIGGLE_ROOM (server/text_generation_server/models/globals.py): 0.95 in v2.3 and v3.0, 0.90 in v2.4,
0.93 in v3.1-v3.2, 0.90 from v3.3. BLOCK_SIZE: 16 (paged) before v2.3; flashinfer, the launcher's default
attention from v2.3 (resolve_attention), uses 1. The launcher defaults (launcher/src/main.rs) are in
`launcher_defaults`; the router (backends/v3/src/main.rs) refuses to start when
"`max_total_tokens` must be <= `max_batch_total_tokens`" or the prefill budget exceeds the batch.
"""

from __future__ import annotations

import re

from kvlint.capacity.course import longest_context
from kvlint.capacity.kv import bytes_per_token_layer, kv_dtype_bytes
from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.units import GIB, gib, tokens

CONTEXT_BYTES = int(0.5 * GIB)  # CUDA context and NCCL state held before the warm-up measures free memory
# launcher/src/main.rs ComputeType::f16_flop: the cards TGI knows by their nvidia-smi name (TFLOPs)
CARD_TFLOPS = {
    "nvidia-4090": 82,
    "nvidia-t4": 65,
    "nvidia-l4": 121,
    "nvidia-l40": 181,
    "nvidia-l40s": 363,
    "nvidia-a10g": 125,
    "nvidia-a40": 149,
    "nvidia-h100-80gb-hbm3": 900,
    "nvidia-h100-nvl": 900,
    "nvidia-h100": 900,
    "nvidia-a100-sxm4-80gb": 312,
    "nvidia-a100-sxm4-40gb": 312,
    "nvidia-a100-80gb-pcie": 312,
    "nvidia-a100": 312,
    "nvidia-h200": 989,
}


def parse_version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", str(text).strip())
    return tuple(int(p) for p in m.groups() if p is not None) if m else None


def wiggle_room(version: tuple[int, ...] | None) -> tuple[float, bool]:
    """(factor, applied inside the fraction) for the server's KV sizing, by release."""
    if version is None or version >= (3, 3):
        return 0.90, True
    if version >= (3, 1):
        return 0.93, True
    if version >= (3, 0):
        return 0.95, True
    if version >= (2, 4):
        return 0.90, True
    if version >= (2, 3):
        return 0.95, True
    if version >= (1, 4, 5):
        return 0.95, False
    return 1.0, False


def block_size(version: tuple[int, ...] | None, attention: str | None) -> int:
    """server/text_generation_server/models/globals.py BLOCK_SIZE for the attention backend in force."""
    if attention is None:
        attention = "flashinfer" if version is None or version >= (2, 3) else "paged"
    return {"flashinfer": 1, "flashdecoding": 256, "flashdecoding-ipex": 64}.get(attention, 16)


def model_flop(arch: ModelArch) -> int | None:
    """launcher Config::flop (per token): attention and MLP matmuls of every layer; None for VLMs."""
    if arch.vision_params:
        return None
    nh, nkv, d, h = arch.query_heads, arch.kv_heads, arch.head_dim, arch.hidden_size
    inter = (arch.intermediate_size or arch.moe_intermediate_size) * max(1, arch.experts_per_token or 1)
    attn = 2 * nh * d * h * 4 + 2 * nkv * d * h * 2
    return (attn + 2 * 3 * h * inter) * arch.layers


def _card(gpu: GpuSpec | None) -> str | None:
    name = gpu.nvidia_smi_name if gpu else None
    return name.replace(" ", "-").lower() if name else None


def vram_maximum(arch: ModelArch, gpu: GpuSpec | None, shards: int, fraction: float) -> int | None:
    """launcher vram_maximum: (smi total x shards x fraction x 0.95 - model_vram) / token_vram; None
    when quantized or the GPU is unknown. model_vram as the launcher computes it (its attention term
    omits x hidden_size), token_vram = KV per token + the fused-MoE style MLP estimate."""
    if arch.quant is not None or gpu is None or not gpu.smi_total_mib:
        return None
    d, h, inter = arch.head_dim, arch.hidden_size, arch.intermediate_size or arch.moe_intermediate_size
    experts = max(1, arch.num_experts)
    available = int(gpu.smi_total_mib * (1 << 20) * shards * fraction * 0.95)
    layer = 3 * inter * experts * h + (arch.query_heads + 2 * arch.kv_heads) * d + arch.query_heads * d * h
    model = (layer * arch.layers + 2 * h * arch.vocab_size) * 2
    kv = arch.kv_heads * 2 * d * 2 * arch.layers
    mlp = (inter + inter // 2) * experts * 2 * 3
    if available < model:
        return None
    return (available - model) // (kv + mlp)


def launcher_defaults(
    arch: ModelArch, gpu: GpuSpec | None, version: tuple[int, ...] | None, shards: int, fraction: float
) -> tuple[int, str]:
    """max_batch_prefill_tokens when unset, and where it comes from."""
    mpe = arch.max_positions
    if version is not None and version < (2, 0):
        return 4096, "TGI v1 default max_batch_prefill_tokens 4096"
    if version is not None and version < (2, 4):
        return mpe - 1 + 50, "TGI v2.0-v2.3 default max_batch_prefill_tokens = max_input_tokens + 50"
    if version is not None and version < (3, 0):
        return min(4096, mpe), "TGI v2.4 default max_batch_prefill_tokens min(4096, max_position_embeddings)"
    flop = model_flop(arch)
    tflops = CARD_TFLOPS.get(_card(gpu) or "")
    optimal = (tflops * 10**12 * shards) // flop if flop and tflops else None
    optimal = optimal if optimal and optimal > 100 else None
    default_optimal = 8000 if arch.family == "gemma3" else 4096
    value = min(optimal or default_optimal, mpe)
    vmax = vram_maximum(arch, gpu, shards, fraction)
    if vmax is not None:
        value = min(value, vmax)
    how = (
        "compute-optimal for this GPU"
        if optimal
        else f"{default_optimal} (the GPU's compute is not in TGI's table)"
    )
    return (
        value,
        f"TGI v3 default max_batch_prefill_tokens: {how}, capped at max_position_embeddings and VRAM",
    )


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    from kvlint.deployment import default

    version = parse_version(version_text)
    shards = int(d.tensor_parallel.value) if d.tensor_parallel else 1
    if d.tensor_parallel is None:
        d.tensor_parallel = default(1, "TGI default --num-shard 1 (one GPU)")
    if "cuda_memory_fraction" not in d.extra:
        d.extra["cuda_memory_fraction"] = default(1.0, "TGI default CUDA_MEMORY_FRACTION 1.0")
    fraction = float(d.extra["cuda_memory_fraction"].value)
    if d.max_context is None:
        if version is not None and version < (2, 0):
            d.max_context = default(2048, "TGI v1 default max_total_tokens 2048")
        elif version is not None and version < (2, 4):
            d.max_context = default(
                arch.max_positions, "TGI v2 default max_total_tokens = max_position_embeddings"
            )
        else:
            d.max_context = default(
                arch.max_positions,
                "TGI default max_total_tokens = min(what the KV cache holds, max_position_embeddings)",
            )
            d.extra["max_total_tokens_default"] = default(True, "TGI caps max_total_tokens to the KV cache")
    if "max_batch_prefill_tokens" not in d.extra:
        value, note = launcher_defaults(arch, gpu, version, shards, fraction)
        d.extra["max_batch_prefill_tokens"] = default(value, note)
    if "max_input_tokens" not in d.extra:
        d.extra["max_input_tokens"] = default(
            int(d.max_context.value) - 1, "TGI default max_input_tokens = max_total_tokens - 1"
        )
    if d.max_sequences is None:
        d.max_sequences = default(128, "TGI default max_concurrent_requests 128")
    extra = {k: v.value for k, v in d.extra.items()}
    extra["version_known"] = version is not None
    return EngineSettings(
        engine="tgi",
        version=version_text,
        generation="-",
        tp=shards,
        pp=1,
        dp=1,
        max_model_len=int(d.max_context.value),
        max_num_seqs=int(d.max_sequences.value),
        max_batched_tokens=int(d.extra["max_batch_prefill_tokens"].value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=str(d.kv_cache_dtype.value) if d.kv_cache_dtype else "auto",
        utilization=fraction,
        block_size=block_size(version, extra.get("attention")),
        enforce_eager=False,
        hybrid_kv_cache_manager=False,
        chunked_prefill=version is None or version >= (3, 0),
        extra=extra,
    )


def prefill_bytes(arch: ModelArch, tokens_: int, tp: int, version: tuple[int, ...] | None = None) -> int:
    """Peak of the warm-up prefill, 2 bytes per value. Dense MLP (flash_llama / flash_mistral
    `forward`, v1.0.0-v3.0.0: `self.down_proj(self.act(gate_up_states[:, 0]) * gate_up_states[:, 1])`):
    the gate/up output (2 x intermediate) stays alive while the activation and the product (one
    intermediate each) are built, beside the layer input and the residual (2 x hidden). MoE: in
    v2.0.x Mixtral calls vLLM's fused_moe (flash_mixtral_modeling.py, the vLLM forks pinned in
    server/Makefile-vllm), whose intermediate caches (M, topk, 2 x ffn/TP), (M x topk, ffn/TP) and
    (M, topk, hidden) are allocated for every prefill token at once (vLLM chunks them only later,
    vllm issue #5938); other releases keep the fused-MoE estimate shared with vLLM's forward term."""
    h = arch.hidden_size
    i = arch.intermediate_size // max(1, tp)
    forward = tokens_ * (4 * i + 2 * h) * 2
    moe = 0
    if arch.num_experts and arch.moe_layers:
        mi = arch.moe_intermediate_size // max(1, tp)
        k = max(1, arch.experts_per_token)
        if version is not None and (2, 0) <= version < (2, 1):
            moe = tokens_ * (k * (2 * mi + mi + h) + 2 * h) * 2
        else:
            moe = tokens_ * k * (max(2 * mi, h) + mi) * 2
    return int(max(forward, moe))


def warmup_logits_bytes(arch: ModelArch, tokens_: int, tp: int, version: tuple[int, ...] | None) -> int:
    """Logits the warm-up prefill keeps until free memory is measured. Every warm-up request sets
    `prefill_logprobs: true` (router/client/src/client.rs `warmup` up to v2.3,
    backends/v3/src/client/grpc_client.rs from v2.4), so before v3.0 the head runs over every
    prefill token: the full-vocabulary logits and their log_softmax (flash_causal_lm.py
    `generate_token`), 2 bytes each, plus the all-gathered copy TensorParallelHead builds when the
    head is sharded. From v3.0 (PR #2797 "Auto max prefill") FlashCausalLMBatch.from_pb drops
    prefill logprobs unless REQUEST_LOGPROBS is set ("This consumes so much memory on long
    requests"), so the term is 0."""
    if version is None or version >= (3, 0):
        return 0
    copies = 2 + (1 if tp > 1 else 0)
    return int(tokens_) * arch.vocab_size * 2 * copies


def plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    version = parse_version(s.version)
    w = weight_bytes(arch, s.tp, 1, s.dtype, s.quantization, engine="tgi")
    kv_bytes = kv_dtype_bytes(s.kv_cache_dtype, arch.dtype)
    wiggle, inside = wiggle_room(version)
    prefill = prefill_bytes(arch, s.max_batched_tokens, s.tp, version)
    terms = [
        Term("weights", w.per_gpu_max, w.source),
        Term(
            "prefill warm-up",
            prefill,
            f"warm-up prefill of {tokens(s.max_batched_tokens)} tokens (activations)",
        ),
        Term(
            "warm-up logits",
            warmup_logits_bytes(arch, s.max_batched_tokens, s.tp, version),
            "prefill_logprobs over every warm-up token (logits + log_softmax, full vocabulary)",
        ),
        Term("CUDA context", CONTEXT_BYTES, "CUDA context and communication buffers"),
    ]
    used = sum(t.bytes for t in terms)
    if inside:
        budget = int(total * s.utilization * wiggle)
        pool = budget - used
    else:
        budget = int(total * s.utilization)
        pool = int((budget - used) * wiggle)
    per_token = bytes_per_token_layer(arch, s.tp, kv_bytes) * arch.attention_layers
    block = max(1, s.block_size)
    kv_tokens = max(0, pool) // (per_token * block) * block if per_token else 0
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
        page_bytes=per_token * block,
        block_size=block,
        layers_per_block=arch.attention_layers,
        num_blocks=kv_tokens // block,
        kv_tokens=kv_tokens,
        max_model_len=ctx,
        max_num_seqs=s.max_num_seqs,
        request_bytes=-(-ctx // block) * block * per_token,
        max_concurrency=kv_tokens / ctx if ctx else 0.0,
        max_len_that_fits=kv_tokens,
        context_at_max_seqs=longest_context(kv_tokens, s.max_num_seqs, 1) if s.max_num_seqs else 0,
        pool_units=kv_tokens,
        request_units=ctx,
        weights_per_gpu=w.per_gpu_max,
        weights_total=w.total,
        weights_source=w.source,
        load_budget=int(total * s.utilization),
    )
    how = f"x wiggle room {wiggle}" if inside else f"(the rest x {wiggle})"
    p.lines = [
        f"GPU memory: {gib(total)} x CUDA_MEMORY_FRACTION {s.utilization:g} {how} = {gib(budget)}",
        *(f"  - {t.label}: {gib(t.bytes)}  ({t.note})" for t in terms),
        f"  = KV pool per GPU: {gib(pool)}",
        f"KV per token per GPU: {per_token:,} B (block {block}) -> max_batch_total_tokens {tokens(kv_tokens)}",
    ]
    declared = s.extra.get("max_batch_total_tokens")
    if isinstance(declared, int):
        p.notes.append(
            f"max_batch_total_tokens {declared:,} is stated; flash models ignore it and infer their own"
        )
    if not s.extra.get("version_known"):
        p.notes.append("TGI version unknown: the newest modelled release (v3.3) applies")
    return p
