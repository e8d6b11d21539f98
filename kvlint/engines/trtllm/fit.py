"""TensorRT-LLM's KV cache on one GPU, from its source (NVIDIA/TensorRT-LLM, the PyTorch backend of 1.x).

The PyTorch backend sizes its pool in two phases (tensorrt_llm/_torch/pyexecutor/py_executor_creator.py
create_py_executor, KvCacheCreator in _util.py):
1. estimation: a small KV cache for the dummy requests (`_get_token_num_for_estimation`: the blocks of
   context requests that together fill max_num_tokens), and a run of them (`configure_kv_cache_capacity`):
   the peak is the weights, the activations of a max_num_tokens forward pass ("Memory dynamically allocated
   during inference (inside torch)") and what lives outside torch ("Memory used outside torch (e.g., NCCL
   and CUDA graphs)"); then
       available = (total - peak + the estimation cache) x free_gpu_memory_fraction   (`_cal_max_memory`)
   capped by kv_cache_config.max_tokens x the KV bytes per token when stated ("max_tokens=N is provided"),
   logged as "Estimated max memory in KV cache : X GiB";
2. the real cache: max_tokens = available // KV bytes per token, in blocks of tokens_per_block
   (resource_manager.py KVCacheManager; "[MemUsageChange] Allocated X GiB for max tokens in paged KV cache
   (N)", N whole blocks).
KV bytes per token (resource_manager.py get_cache_size_per_token): kv_factor (2; 1 for MLA's latent) x the
KV heads of the layers on this rank x head_dim x the KV dtype's bytes (fp8 1, bf16/fp16 2; nvfp4 half a
byte plus one fp8 scale per 16).
When max_seq_len does not fit the pool the engine does not refuse: `get_max_atten_window_upper_bound`
(blocks // beam_width x tokens_per_block) bounds it, and "Attention window size S exceeds upper bound U for
available blocks. Reducing to U." ... "Adjusted max_seq_len to U" (resource_manager.py
adjust_window_sizes_for_vswa's caller; KvCacheCreator._create_kv_cache_manager sets max_seq_len from it).

The engine-build path (`--backend trt`: the LLM API builds a TensorRT engine and runs it in the C++ executor) has
no estimation run: once the engine, its execution context and the runtime and decoder buffers are allocated,
cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp (calculateFreeMemBytes) takes the free memory the device
reports ("Memory usage when calculating max tokens in paged kv cache: total: X GiB, available: Y GiB") times
free_gpu_memory_fraction (17.83 GiB x 0.9 = 16.05 GiB = 8,219 blocks of 32, TensorRT-LLM 0.19.0, calibration
t-005). The same arithmetic, with the terms before it named for that path; of those, the runtime buffers' logits
and the decoder state's arrays (compute.engine_buffer_bytes) and the decoder layers' workspaces - the logits copy,
top-k's scratch buffer and the penalty layer's occurrence counts (sampling.sampling_workspace_bytes) - are read
from the C++ source, while the engine's execution context (TensorRT's device memory size, fixed when the engine
was built and known only from the built engine) is not known to the byte.

The activation and outside-torch terms are kvlint's estimates (compute.py), said so in the plan.
"""

from __future__ import annotations

from kvlint.capacity.kv import DTYPE_BYTES, bytes_per_token_layer, cdiv, pp_partitions
from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.capacity.weights import weights as weight_bytes
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.base import LongSequence, Startup
from kvlint.engines.trtllm.compute import (
    activation_bytes,
    engine_buffer_bytes,
    engine_path,
    engine_window,
    outside_torch_bytes,
)
from kvlint.engines.trtllm.sampling import sampling_workspace_bytes
from kvlint.units import gib, tokens

NVFP4_BYTES = 0.5 + 1 / 16  # 4-bit values and one fp8 scale per 16 (calculate_scaling_factor_size_bytes)


def kv_bytes(arch: ModelArch, kv_cache_dtype: str) -> float:
    name = kv_cache_dtype.lower()
    if name.startswith("fp8") or name == "int8":
        return 1.0
    if name == "nvfp4":
        return NVFP4_BYTES
    return DTYPE_BYTES.get(arch.dtype.lower(), 2.0) if name == "auto" else DTYPE_BYTES.get(name, 2.0)


def kv_per_token(arch: ModelArch, s: EngineSettings) -> int:
    """KV bytes of one token on the GPU that holds the most layers (the first pipeline stages)."""
    layers = max(pp_partitions(arch.layers, s.pp))
    return layers * bytes_per_token_layer(arch, s.tp, kv_bytes(arch, s.kv_cache_dtype))


def pool_of(budget: int, per_token: int, block: int, max_tokens: int | None = None) -> tuple[int, int]:
    """(blocks, tokens) of the pool `budget` bytes buy: `max_tokens = budget // per_token`, capped by
    kv_cache_config.max_tokens, in whole blocks rounded up (max_tokens 86,711 -> 2,710 blocks of 32 = 86,720:
    "Allocated 5.95 GiB for max tokens in paged KV cache (86720)", TensorRT-LLM 1.1.0rc3, calibration t-001)."""
    tokens = budget // per_token if per_token else 0
    if max_tokens is not None and max_tokens > 0:
        tokens = min(tokens, max_tokens)
    blocks = cdiv(tokens, max(1, block))
    return blocks, blocks * max(1, block)


def layout(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    ep = int(s.extra.get("ep") or 0)
    w = weight_bytes(
        arch, s.tp, s.pp, s.dtype, s.quantization, "trtllm", moe_ranks=max(s.tp, ep), expert_parallel=ep > 1
    )
    act, act_note = activation_bytes(arch, s)
    outside, outside_note = outside_torch_bytes(s)
    terms = [
        Term("weights", w.per_gpu_max, w.source),
        Term("activations", act, act_note),
        Term("CUDA context" if engine_path(s) else "outside torch", outside, outside_note),
    ]
    if engine_path(s):
        terms.append(Term("runtime and decoder buffers", *engine_buffer_bytes(arch, s)))
        terms.append(Term("decoder sampling workspace", *sampling_workspace_bytes(arch, s)))
    free = total - sum(t.bytes for t in terms)
    fraction = s.utilization
    per_token = kv_per_token(arch, s)
    budget = int(max(0, free) * fraction)
    cap = s.extra.get("kv_max_tokens")
    blocks, kv_tokens = pool_of(budget, per_token, s.block_size, cap if isinstance(cap, int) else None)
    block = max(1, s.block_size)
    pool = kv_tokens * per_token if free > 0 else free
    beam = max(1, int(s.extra.get("beam") or 1))
    upper = blocks // beam * block
    shrinks = cdiv(s.max_model_len, block) * beam > blocks if engine_path(s) else 0 < upper < s.max_model_len
    if engine_path(s) and shrinks:
        upper = engine_window(blocks, block, beam, s)
    request_units = cdiv(s.max_model_len, block)
    p = Plan(
        engine="trtllm", generation=s.extra.get("backend", "pytorch"), gpu_total=total, utilization=1.0,
        budget=total, terms=terms, kv_pool=pool, kv_per_token=per_token, page_bytes=per_token * block,
        block_size=block, layers_per_block=max(pp_partitions(arch.layers, s.pp)), num_blocks=blocks,
        kv_tokens=kv_tokens, max_model_len=s.max_model_len, max_num_seqs=s.max_num_seqs,
        request_bytes=per_token * s.max_model_len,
        max_concurrency=kv_tokens / s.max_model_len if s.max_model_len else 0.0,
        max_len_that_fits=upper, context_at_max_seqs=kv_tokens // max(1, s.max_num_seqs) // block * block,
        weights_per_gpu=w.per_gpu_max, weights_total=w.total, weights_source=w.source,
        stage_pools=[pool] * s.pp, pool_units=blocks, request_units=request_units,
    )  # fmt: skip
    if shrinks and 0 < upper < s.max_model_len:
        # the length it starts with, which only the plan knows (KV102 reads Plan.startup first); the C++ executor
        # of the engine path says it in its own words
        said = (
            f"maxSequenceLen is reduced to maxAttentionWindow: {upper}"
            if engine_path(s)
            else f"Adjusted max_seq_len to {upper}"
        )
        p.startup = LongSequence(Startup.SHRINKS, said, shrinks_to=upper)
        p.notes.append(
            f"max_seq_len {s.max_model_len:,} does not fit the pool: TensorRT-LLM starts with it reduced to"
            f' {upper:,} ("{said}")'
        )
    if s.extra.get("kv_unread"):
        p.notes.append(
            f"the KV cache is priced at {kv_bytes(arch, s.kv_cache_dtype):g} B per value: the checkpoint is matched"
            f" by name to {arch.id}, so kvlint cannot read the kv_cache_quant_algo of its own quantization config,"
            ' which TensorRT-LLM follows with kv_cache_dtype "auto"; if that config quantizes the KV cache to FP8'
            " the pool holds twice the tokens (state kv_cache_config.dtype to make the plan exact)"
        )
    shown = f"{fraction}{s.utilization_default}"
    after = "the engine, its execution context and buffers" if engine_path(s) else "the estimation run"
    p.lines = [
        f"GPU memory: {gib(total)} (TensorRT-LLM {p.generation} backend, TP {s.tp}, PP {s.pp})",
        *(f"  - {t.label}: {gib(t.bytes)}  ({t.note})" for t in terms),
        f"  = {gib(free)} free after {after} x free_gpu_memory_fraction {shown} = {gib(budget)}",
        f"KV cache: {tokens(kv_tokens)} tokens ({blocks:,} blocks of {block}) x {per_token:,} B per token"
        f" ({s.kv_cache_dtype}) = {gib(max(0, pool))}"
        + (f" ({_cap_name(s)} {cap:,})" if isinstance(cap, int) and cap > 0 else ""),
        f"  one sequence of max_seq_len {s.max_model_len:,}: {gib(p.request_bytes)}; the longest that fits: {tokens(upper)}",
    ]
    return p


def _cap_name(s: EngineSettings) -> str:
    """The setting that capped the pool: Triton's config.pbtxt parameter, else the LLM API's."""
    from kvlint.engines.trtllm.repository import KEY

    return "max_tokens_in_paged_kv_cache" if KEY in s.extra else "kv_cache_config.max_tokens"
