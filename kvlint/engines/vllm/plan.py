"""vLLM's memory accounting, version-aware (V1 by default; V0 where the version says so).

Per GPU (vllm/v1/worker/gpu_worker.py determine_available_memory):
    available KV = total_memory x gpu_memory_utilization
                   - weights ("Model loading took X GiB")
                   - peak activation (profile_run: dummy forward at max_num_batched_tokens + sampler)
                   - non-torch memory (NCCL / custom all-reduce buffers, cuBLAS workspace)
                   - CUDA-graph estimate (subtracted from v0.21, when not --enforce-eager)
    num_blocks = available // (page_size x layers per block)     (vllm/v1/core/kv_cache_utils.py)
The tightest pipeline stage binds (num_blocks is the minimum over workers).
"""

from __future__ import annotations

from kvlint.capacity.kv import (
    FULL,
    bytes_per_token_layer,
    cdiv,
    cross_note,
    group_layers,
    kv_dtype_bytes,
    request_blocks,
    run_dtype,
    text_token_layers,
)
from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.capacity.weights import Weights, spare_experts
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.vllm import encoder, lora
from kvlint.engines.vllm.dsa import cache as dsa_cache
from kvlint.engines.vllm.lines import plan_lines
from kvlint.engines.vllm.sampler import FUSED, moe_caches_persist, sampler_path, sort_bytes_per_logit
from kvlint.engines.vllm.settings import settings  # the engine registry calls vllm.settings
from kvlint.engines.vllm.state import v0_state_terms, vllm_layout
from kvlint.engines.vllm.v0 import reserved_forward_bytes
from kvlint.engines.vllm.versions import (  # re-exported: callers use vllm.default_batching etc.
    auto_fits_context,
    capture_limit,
    cite,
    default_batching,
    default_utilization,
    generation,
    logs_concurrency_tokens,
    parse_version,
    reserved_peak,
    subtracts_cuda_graphs,
    unknown_version_note,
)
from kvlint.record import replace
from kvlint.units import GIB, gib, tokens

MIB = 1 << 20

# --- the working-memory terms ------------------------------------------------------------------


def non_torch_bytes(
    tp: int, pp: int, gpu: GpuSpec | None = None, extra: dict | None = None
) -> tuple[int, str]:
    """Memory outside PyTorch's allocator that the profile run measures. With TP > 1 it is
    dominated by NCCL; at TP 1 by cuBLAS workspaces and CUDA context extras; pipeline-only workers
    (no all-reduce) hold the least. Figures from the calibration logs
    (../shared/calibration/vllm_startup_logs.yaml, vLLM 0.19 on H100 SXM; no log measures PCIe cards at
    TP > 1, so the TP > 1 figure is assumed there): TP 1 0.24-0.26 GiB; TP 2 2.07-2.09 GiB; TP 4
    2.13-2.21 GiB; PP 4 x TP 1 0.07 GiB. Custom all-reduce is no part of it: its buffers (24 MiB, see
    `custom_all_reduce_off`) are allocated in init_device before the snapshot the term is measured from
    (vllm==0.19.0:vllm/v1/worker/gpu_worker.py:263 init_worker_distributed_environment, :282
    MemorySnapshot; vllm==0.11.0 the same at :169/:182; vllm==0.8.5 V1 counted all non-torch memory,
    gpu_worker.py:205, which the 24 MiB hardly moves), so where vLLM turns it off the term stays."""
    if tp > 1:
        off = custom_all_reduce_off(tp, gpu, extra or {})
        why = f"; custom all-reduce is off, {off}, and its buffers are not in this term anyway" if off else ""
        return int(2.1 * GIB), f"non-torch memory at TP {tp} (NCCL buffers{why})"
    if pp > 1:
        return int(0.07 * GIB), "non-torch memory of a pipeline-parallel worker without TP"
    return int(0.25 * GIB), "non-torch memory at TP 1 (cuBLAS workspace and CUDA context extras)"


# vLLM's custom all-reduce (vllm==0.19.0:vllm/distributed/device_communicators/custom_all_reduce.py; the same
# checks at vllm==0.8.5 :135 and vllm==0.11.0 :143): on the TP group only (cuda_communicator.py:44-56), off under
# --disable-custom-all-reduce (gpu_worker.py:1026 set_custom_all_reduce), for world sizes other than 2, 4, 6, 8
# (:52, :105-113) and on more than two GPUs not all NVLink-connected (:152-158 "not supported on more than two
# PCIe-only GPUs"). When on it allocates meta_size() + 8 MiB uncached, an 8 MiB IPC buffer and 8 MiB of rank
# data per GPU (:59 max_size=8192 * 1024, :176-189).
CUSTOM_AR_WORLD_SIZES = (2, 4, 6, 8)


def custom_all_reduce_off(tp: int, gpu: GpuSpec | None, extra: dict) -> str | None:
    """Why vLLM runs without custom all-reduce at this TP on this GPU, or None (on, or the catalog cannot
    tell: it records the PCIe form factor only where the card's name says PCIe)."""
    if extra.get("disable_custom_all_reduce"):
        return "--disable-custom-all-reduce"
    if tp not in CUSTOM_AR_WORLD_SIZES:
        return f"vLLM supports it at TP {', '.join(map(str, CUSTOM_AR_WORLD_SIZES))} only"
    if tp > 2 and gpu is not None and gpu.pcie_card:
        return f"vLLM turns it off on more than two PCIe GPUs ({gpu.name})"
    return None


# Bytes per vocabulary entry per sampled row when FlashInfer or the Triton kernel does top-k/top-p
# (vllm_sampler.py; a PyTorch sort takes 38): fitted on the v0.19 logs' dense models, 1,024 rows.
SAMPLER_BYTES_PER_LOGIT = 14.6
# Bytes per hidden element per batched token that stay live across the sampler run (the last
# hidden states and their copies), from the same fit.
HIDDEN_BYTES_PER_TOKEN = 2.4


def activation_bytes(
    arch: ModelArch, s: EngineSettings, act_bytes: float, last_stage: bool = True
) -> tuple[int, str]:
    """Peak of profile_run (vllm/v1/worker/gpu_model_runner.py): a dummy forward pass of
    max_num_batched_tokens tokens, then (on the last pipeline stage) `_dummy_sampler_run` on
    min(max_num_seqs, max_num_batched_tokens) rows of logits over the whole vocabulary (gathered on
    every TP rank, so it does not shrink with TP). MoE layers add the fused-MoE intermediate caches,
    T x top_k x (max(2 I, H) + I) x 2 bytes (vllm fused_moe: cache13 shared with cache3, cache2).
    V0's profile ran max_num_seqs sequences without the V1 sampler warm-up: the forward pass."""
    t, tp = s.max_batched_tokens, max(1, s.tp)
    h, dense_i = arch.hidden_size, arch.intermediate_size
    forward = t * (3 * dense_i // tp + 3 * h) * act_bytes
    moe = 0
    if arch.num_experts and arch.moe_layers:
        i = arch.moe_intermediate_size // tp
        moe = t * max(1, arch.experts_per_token) * (max(2 * i, h) + i) * act_bytes  # type: ignore[assignment]
    if s.generation == "V0":  # before v0.6.4 the peak is the allocator's reserved segments (vllm_v0.py)
        seg = reserved_peak(parse_version(s.version))
        forward = reserved_forward_bytes(arch, t, tp, act_bytes) if seg else forward
        peak = max(forward, moe) + min(s.max_num_seqs, t) * arch.vocab_size * 4
        held = "tokens, as the allocator's reserved segments" if seg else "batched tokens"
        return int(peak), f"activation peak of the V0 profile run ({tokens(t)} {held})"
    if not last_stage:
        peak = max(forward, moe)
        return int(
            peak
        ), f"activation peak of a non-final pipeline stage (forward pass of {tokens(t)} tokens, no sampler)"
    rows = min(s.max_num_seqs, t)
    path, why = sampler_path(s.version, s.extra, rows)  # vllm_sampler.py: FlashInfer/Triton or a PyTorch sort
    per_logit = SAMPLER_BYTES_PER_LOGIT if path == FUSED else sort_bytes_per_logit(rows)
    sampler = rows * arch.vocab_size * per_logit + t * h * HIDDEN_BYTES_PER_TOKEN
    kept = moe if moe_caches_persist(s.version) else 0  # freed after each layer before v0.11
    peak = max(forward, moe, sampler + kept)
    what = f"sampler on {tokens(rows)} rows x {tokens(arch.vocab_size)} vocab, {why}"
    what = what if sampler + kept >= max(forward, moe) else "forward pass"
    what += " + fused-MoE caches" if kept or (moe and peak == moe) else ""
    return int(peak), f"activation peak of the profile run ({what}; {tokens(t)} batched tokens)"


def cuda_graph_bytes(arch: ModelArch, s: EngineSettings, gpu: GpuSpec | None = None) -> tuple[int, str]:
    """vLLM >= 0.20 subtracts an estimate of CUDA-graph memory (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS).
    The v0.19 logs print the estimate without subtracting it: 0.84 GiB for most 28-42-layer models,
    1.1-1.6 GiB for 46-80 layers (about 0.02 GiB per layer); smaller when fewer batch sizes are
    captured (capture sizes go up to min(2 x max_num_seqs, 512), 1024 on Blackwell from 0.28: the
    version table's capture_limit; past 512 the estimate is extrapolated, no log measures it)."""
    if s.enforce_eager:
        return 0, "no CUDA graphs (--enforce-eager, or cudagraph_mode NONE)"
    stated = s.extra.get("max_cudagraph_capture_size")
    limit = capture_limit(parse_version(s.version), gpu, s.max_num_seqs, stated)
    sizes = min(
        limit, s.max_batched_tokens
    )  # no graph larger than a batch (vllm==0.12.0:vllm/config/vllm.py:1042)
    per_layer = max(0.84, 0.0204 * arch.layers) * GIB
    est = int(per_layer * (0.3 + 0.7 * sizes / 512))
    how = " (--max-cudagraph-capture-size)" if stated else ""
    return est, f"CUDA-graph memory estimate (captures up to {sizes} sequences{how})"


# --- the plan ----------------------------------------------------------------------------------


def plan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    kv_bytes = kv_dtype_bytes(s.kv_cache_dtype, _weights_dtype(arch, s))
    act_dtype_bytes = 2.0
    w = weight_bytes(
        arch,
        s.tp,
        s.pp,
        s.dtype,
        s.quantization,
        moe_ranks=s.tp * s.dp,
        expert_parallel=s.expert_parallel,
        redundant_experts=spare_experts(s.extra),
    )
    budget = int(total * s.utilization)
    non_torch, non_torch_note = non_torch_bytes(s.tp, s.pp, gpu, s.extra)
    act, act_note = encoder.profile_peak(arch, s, lambda t: activation_bytes(arch, t, act_dtype_bytes))
    graphs, graphs_note = cuda_graph_bytes(arch, s, gpu)
    if not s.subtract_cuda_graphs:
        graphs_note += "; not subtracted (before v0.20, AMD before v0.26, or the estimate switched off)"
    graph_terms = [Term("CUDA graphs", graphs, graphs_note)] if s.subtract_cuda_graphs and graphs else []
    graph_terms += v0_state_terms(arch, s)  # V0: the Mamba cache the profile run allocates

    s, stages, hybrid, state_note = vllm_layout(arch, s, kv_bytes)  # Mamba layers: state groups
    dsa = dsa_cache(arch, s.version, s.kv_cache_dtype, gpu)  # DeepSeek sparse attention: indexer keys
    per_layer = (dsa and dsa.latent_bytes) or bytes_per_token_layer(arch, s.tp, kv_bytes)
    page_layer = per_layer * s.block_size

    best: tuple[int, int, Plan] | None = None
    offload = int(
        float(s.extra.get("cpu_offload_gb") or 0) * GIB
    )  # --cpu-offload-gb: GiB per GPU kept in CPU memory
    pools: list[int] = []
    from_memory: dict[int, int] = {}  # blocks the memory leaves, per stage, before --num-gpu-blocks-override
    for idx, kinds in enumerate(stages):
        last = idx == len(stages) - 1
        stage_act, stage_act_note = (
            (act, act_note) if last else activation_bytes(arch, s, act_dtype_bytes, last_stage=False)
        )
        weights = _weights_term(w, idx, offload)
        terms = [
            weights,
            Term("activation peak", stage_act, stage_act_note),
            Term("non-torch", non_torch, non_torch_note),
            *graph_terms,
        ]
        pool = _pool(s, budget, terms)
        groups = group_layers(kinds, hybrid)
        index_tok = dsa.indexer_bytes_for(sum(map(len, stages[:idx])), len(kinds)) if dsa else 0
        per_block = page_layer * max(1, groups.group_size) + index_tok * s.block_size
        num_blocks = max(0, pool) // per_block if per_block else 0
        from_memory[idx] = num_blocks
        num_blocks, pool = override_blocks(s, num_blocks, pool, per_block)
        need_blocks = _blocks_per_request(arch, s, groups)
        kv_tok = _logged_tokens(s, groups.num_groups, num_blocks, need_blocks, dsa is not None)
        usable_blocks = max(0, num_blocks - 1) if s.generation == "V1" else num_blocks  # the null block
        p = Plan(
            engine="vllm",
            generation=s.generation,
            gpu_total=total,
            utilization=s.utilization,
            budget=budget,
            terms=terms,
            kv_pool=pool,
            kv_per_token=text_token_layers(kinds, hybrid) * per_layer + index_tok,
            page_bytes=page_layer,
            block_size=s.block_size,
            layers_per_block=groups.group_size * groups.num_groups,
            kv_groups=groups.num_groups,
            group_slots=max(1, groups.group_size),
            num_blocks=num_blocks,
            kv_tokens=kv_tok,
            max_model_len=s.max_model_len,
            max_num_seqs=s.max_num_seqs,
            request_bytes=need_blocks * per_block,
            max_concurrency=usable_blocks / need_blocks if need_blocks else 0.0,
            max_len_that_fits=_largest_len(arch, s, groups, usable_blocks),
            context_at_max_seqs=_context_for(arch, s, groups, usable_blocks, s.max_num_seqs),
            pool_units=usable_blocks,
            request_units=need_blocks,
            weights_per_gpu=weights.bytes,
            weights_total=w.total,
            weights_source=w.source,
            stage=idx,
        )
        pools.append(pool)
        key = (num_blocks, -idx)
        if best is None or key < best[:2]:
            best = (num_blocks, -idx, p)
    assert best is not None
    p = best[2]
    fitted = _auto_fit(arch, gpu, s, p)
    if fitted is not None:
        return fitted
    p.stage_pools = pools
    p.notes.extend(override_note(s, from_memory[p.stage]))
    vnote = unknown_version_note(s.version)  # no version: the newest rows of the table, said so
    notes = (_sliding_note(arch, hybrid), state_note, cross_note(arch, hybrid), dsa and dsa.note, vnote)
    p.notes.extend(n for n in notes if n)
    p.indexer_keys = dsa is not None
    p.lines = plan_lines(p, arch, s, kv_bytes, dsa) + override_note(s, from_memory[p.stage])
    lora_note = lora.note(s.extra)
    if lora_note:
        p.notes.append(lora_note)
        p.lines.append(lora_note)
    return p


def _auto_fit(arch: ModelArch, gpu: GpuSpec, s: EngineSettings, p: Plan) -> Plan | None:
    """--max-model-len auto (from v0.14.0): vLLM lowers max_model_len to the largest one request fits
    (v1/core/kv_cache_utils._auto_fit_max_model_len); the plan at that length, said so."""
    if not s.extra.get("max_model_len_auto") or not auto_fits_context(parse_version(s.version)):
        return None
    if not 0 < p.max_len_that_fits < s.max_model_len:
        return None  # the full length fits, or not even one token: vLLM keeps it or refuses
    extra = {k: v for k, v in s.extra.items() if k != "max_model_len_auto"}
    q = plan(arch, gpu, replace(s, max_model_len=p.max_len_that_fits, extra=extra))
    q.notes.append(
        f"--max-model-len auto: vLLM lowers max_model_len from {s.max_model_len:,} to {q.max_model_len:,}, the "
        f"largest one request fits ({cite('max_model_len_auto', parse_version(s.version))})"
    )
    return q


def override_blocks(s: EngineSettings, num_blocks: int, pool: int, per_block: int) -> tuple[int, int]:
    """--num-gpu-blocks-override: vLLM replaces the block count the memory gives with the stated one
    (V1 vllm==0.10.0:vllm/v1/core/kv_cache_utils.py:774-780 `num_blocks = num_gpu_blocks_override`; V0
    vllm==0.8.0:vllm/engine/llm_engine.py:434-440; vllm==0.33.0:vllm/v1/core/kv_cache_planning.py:1510-1532
    plans with override x bytes per block as the available memory). (blocks, pool bytes)."""
    override = s.extra.get("num_gpu_blocks_override")
    if not override or not per_block:
        return num_blocks, pool
    return int(override), int(override) * per_block


def override_note(s: EngineSettings, from_memory: int) -> list[str]:
    """What --num-gpu-blocks-override did to the pool, and whether the memory holds it."""
    override = s.extra.get("num_gpu_blocks_override")
    if not override:
        return []
    note = (
        f"--num-gpu-blocks-override {int(override):,}: vLLM allocates that many blocks instead of the "
        f"{from_memory:,} the memory leaves"
    )
    if int(override) > from_memory:
        note += "; it does not check them against the memory, so start-up can fail with CUDA out of memory"
    return [note]


def _weights_dtype(arch: ModelArch, s: EngineSettings) -> str:
    """The dtype the model runs in: --dtype, or the model's own (float32 as float16) when auto or unset."""
    return run_dtype(arch.dtype, s.dtype)


def _weights_term(w: Weights, idx: int, offload: int) -> Term:
    """One pipeline stage's weights per GPU, less what --cpu-offload-gb keeps in CPU memory."""
    return Term(
        "weights",
        max(0, w.per_stage[idx] - offload),
        w.source + (f"; minus {gib(offload)} offloaded to CPU (--cpu-offload-gb)" if offload else ""),
    )


def _pool(s: EngineSettings, budget: int, terms: list[Term]) -> int:
    """The KV-cache pool per GPU: --kv-cache-memory-bytes, else the budget less every term."""
    if s.kv_cache_memory_bytes:
        return s.kv_cache_memory_bytes
    return budget - sum(t.bytes for t in terms)


def _logged_tokens(s: EngineSettings, num_groups: int, num_blocks: int, need_blocks: int, dsa: bool) -> int:
    """The tokens vLLM's "GPU KV cache size" line states: from 0.20.1 (V1) the pool's concurrency at
    max_model_len times max_model_len, what requests can use; before, the blocks per KV-cache group times
    the block size, which for a hybrid model counts neither the blocks the attention group can take from the
    state groups nor the state blocks a request holds. KV102 and KV103 use neither: they count the blocks
    one request takes (`max_concurrency`)."""
    if not num_groups:
        return 0
    if not dsa and need_blocks and logs_concurrency_tokens(s.generation, s.version):
        return int(num_blocks / need_blocks * s.max_model_len)
    return num_blocks // num_groups * s.block_size


def _blocks_per_request(arch: ModelArch, s: EngineSettings, groups, max_len: int | None = None) -> int:
    """Blocks one request of max_model_len (or max_len) tokens takes, over every KV-cache group."""
    window = arch.sliding_window or arch.attention_chunk_size
    n = s.max_model_len if max_len is None else max_len
    return request_blocks(groups, n, s.block_size, window, s.max_batched_tokens, arch.encoder_tokens)


def _sliding_note(arch: ModelArch, hybrid: bool) -> str | None:
    if hybrid and arch.has_sliding:
        return "hybrid KV cache manager: sliding-window layers hold only the window plus batched tokens"
    if arch.has_sliding:
        return "sliding-window layers are sized for the full context (V0 or hybrid manager disabled)"
    return None


def _largest_len(arch: ModelArch, s: EngineSettings, groups, blocks: int) -> int:
    """Binary search of the largest max_model_len whose one request fits `blocks` (vLLM's estimate)."""
    if not groups.groups or _blocks_per_request(arch, s, groups, 1) > blocks:
        return 0
    lo, hi = 1, max(s.max_model_len, arch.max_positions) * 64
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _blocks_per_request(arch, s, groups, mid) <= blocks:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _context_for(arch: ModelArch, s: EngineSettings, groups, blocks: int, seqs: int) -> int:
    if seqs <= 0 or not groups.groups:
        return 0
    per_seq = blocks // seqs
    return _largest_len(arch, s, groups, per_seq) if per_seq else 0


__all__ = [
    "FULL",
    "cdiv",
    "default_batching",
    "default_utilization",
    "generation",
    "parse_version",
    "plan",
    "settings",
    "subtracts_cuda_graphs",
]
