"""The buffers llama.cpp allocates on one GPU and whether they fit (plan.py says where each rule is read)."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.llamacpp import autofit, multi, ollama_gpus
from kvlint.engines.llamacpp import layers as L
from kvlint.engines.llamacpp.autofit import MARGIN
from kvlint.engines.llamacpp.compute import CONTEXT_BYTES, compute_bytes
from kvlint.units import gib, tokens


def _kv(arch: ModelArch, s: EngineSettings, n_ctx_seq: int, streams: int = 0) -> list[int]:
    streams = streams or (1 if s.extra["unified"] else s.max_num_seqs)
    swa = L.window_cells(
        arch, n_ctx_seq, s.extra["unified"], s.max_num_seqs, s.extra["n_ubatch"], s.extra["pad"]
    )
    bk, bv = L.KV_TYPE_BYTES[s.kv_cache_dtype], L.KV_TYPE_BYTES[s.extra["type_v"]]
    return L.kv_by_layer(arch, n_ctx_seq, streams, swa, s.extra["swa_full"], bk, bv)


def _on_gpu(arch: ModelArch, s: EngineSettings, ngl: int) -> tuple[int, int, int, bool]:
    """(weights, KV, compute) bytes on the GPU with `ngl` layers offloaded, and whether the output is."""
    layers, _embed, output = L.placed(arch, s.extra.get("moved"))
    n = len(layers)
    first = max(n - ngl, 0)
    out_gpu = ngl > n
    weights = sum(layers[first:]) + (output if out_gpu else 0)
    kv = sum(_kv(arch, s, int(s.extra["n_ctx_seq"]))[first:]) if s.extra["kv_offload"] else 0
    return weights, kv, compute_bytes(arch, s, out_gpu)[0], out_gpu


def _fits_layers(arch: ModelArch, s: EngineSettings, room: int) -> int:
    """The most layers whose weights, KV cache and compute buffer fit in `room` (Ollama's placement)."""
    for ngl in range(arch.layers + 1, -1, -1):
        w, kv, c, _ = _on_gpu(arch, s, ngl)
        if w + kv + c <= room:
            return ngl
    return 0


def ollama_layers(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> int:
    """The layers Ollama's scheduler puts on this GPU (the output layer counts as one more): as many as fit with
    their KV cache and the compute buffer (llm/memory.go EstimateGPULayers), the rest run on the CPU."""
    arch = L.as_pulled(arch, s.extra.get("gguf_file_type"))
    room = (gpu.engine_bytes or 0) - CONTEXT_BYTES - int(s.extra.get("gpu_overhead") or 0)
    return _fits_layers(arch, s, room)


def ollama_placement(arch: ModelArch, gpu: GpuSpec, s: EngineSettings, n_gpus: int) -> list[int]:
    """The layers Ollama's scheduler puts on each GPU it uses: all on one when they fit it (ollama_layers),
    else spread over the fewest of the pod's `n_gpus` that hold them (ollama_gpus.py)."""
    ngl = ollama_layers(arch, gpu, s)
    if n_gpus <= 1 or ngl > arch.layers:
        return [ngl]
    arch = L.as_pulled(arch, s.extra.get("gguf_file_type"))
    layers, _embed, output = L.weights_by_layer(arch)
    kv = _kv(arch, s, int(s.extra["n_ctx_seq"])) if s.extra["kv_offload"] else [0] * len(layers)
    room = (gpu.engine_bytes or 0) - CONTEXT_BYTES - int(s.extra.get("gpu_overhead") or 0)
    room -= compute_bytes(arch, s, True)[0]  # the graph every GPU it uses reserves (llm/server.go:613-635)
    counts = ollama_gpus.spread([w + k for w, k in zip(layers, kv, strict=True)] + [output], room, n_gpus, 2)
    return [c for c in counts if c]  # the runner hands llama.cpp only the GPUs with layers


def layout(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    """The buffers on the GPU (on each GPU: multi.py); when they do not fit and --fit may cut the unset
    context, the cut plan (autofit.py)."""
    p = _layout(arch, gpu, s)
    if p.warmup_fails and s.extra.get("ctx_fit"):
        kv, deficit = _deficit(arch, gpu, s, p)
        return autofit.shrunk(arch, gpu, s, p, _layout, kv, deficit) or p
    return p


def _deficit(arch: ModelArch, gpu: GpuSpec, s: EngineSettings, failed: Plan) -> tuple[int, int]:
    """(the KV cache, the memory --fit must free with its margin on every GPU): llama_params_fit weighs
    the sum over the GPUs (src/llama.cpp:228)."""
    n_dev = int(s.extra.get("n_devices") or 1)
    if n_dev > 1:
        pulled = L.as_pulled(arch, s.extra.get("gguf_file_type"))
        kv, room = multi.surplus(multi.rows(pulled, gpu, s, *_kv_lists(pulled, s)))
        return kv, n_dev * MARGIN - room
    left = failed.budget - sum(t.bytes for t in failed.terms)
    kv = left - failed.kv_pool  # a failed plan's pool is what is left less the cache
    return kv, kv - (left - MARGIN)


def _kv_lists(arch: ModelArch, s: EngineSettings) -> tuple[list[int], list[int]]:
    """Each layer's KV bytes at the plan's cells, and at one cell of one stream."""
    return _kv(arch, s, int(s.extra["n_ctx_seq"])), _kv(arch, s, 1, streams=1)


def _gpu_layers(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> tuple[int, list[str]]:
    """The layers offloaded (-ngl, capped at the layers + the output layer) and what the plan notes of them:
    on one GPU Ollama's scheduler decides how many, and fewer than all is said."""
    ngl = min(int(s.extra["ngl"]), arch.layers + 1)
    if not s.extra["ollama"] or int(s.extra.get("n_devices") or 1) != 1:
        return ngl, []
    ngl = ollama_layers(arch, gpu, s)
    if ngl > arch.layers:
        return ngl, []
    on_gpu = min(ngl, arch.layers)
    return ngl, [
        f"Ollama's scheduler loads {on_gpu} of {arch.layers} layers on the GPU"
        f" ({arch.layers - on_gpu} on the CPU: it runs, slowly)"
    ]


def _does_not_fit(weights: int, compute: int, kv: int, n_ctx: int, total: int) -> str:
    """What KV102 says when llama.cpp's start-up allocation fails."""
    return (
        f"the buffers do not fit: weights {gib(weights)} + compute {gib(compute)} + KV cache {gib(kv)} ({n_ctx:,}"
        f" cells) exceed the {gib(total)} of the GPU less {gib(CONTEXT_BYTES)} of CUDA context; llama.cpp"
        ' fails to allocate ("cudaMalloc failed: out of memory", "failed to allocate buffer for kv cache")'
        " and llama-server exits"
    )


def _layout(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan:
    total = gpu.engine_bytes or 0
    ngl, notes = _gpu_layers(arch, gpu, s)
    arch = L.as_pulled(arch, s.extra.get("gguf_file_type"))
    if int(s.extra.get("n_devices") or 1) > 1:
        return multi.layout(arch, gpu, s, *_kv_lists(arch, s))
    weights, kv, compute, out_gpu = _on_gpu(arch, s, ngl)
    layers_all, embed, output = L.weights_by_layer(arch)
    whole = sum(layers_all) + embed + (output if arch.lm_head_params else 0)
    n_ctx, n_ctx_seq = int(s.extra["n_ctx"]), int(s.extra["n_ctx_seq"])
    gpu_layers = min(ngl, arch.layers)
    terms = [
        Term("weights", weights, f"{gpu_layers} of {arch.layers} layers" + (" and the output layer" if out_gpu else "")
             + " (token_embd stays on the CPU" + ("; the tensors --override-tensor keeps on the CPU"
             " left out)" if s.extra.get("moved") is not None else ")")),
        Term("compute buffer", compute, compute_bytes(arch, s, out_gpu)[1]),
        Term("CUDA context", CONTEXT_BYTES, "CUDA context and cuBLAS workspace (kvlint assumption)"),
    ]  # fmt: skip
    if s.extra.get("gpu_overhead"):
        terms.append(
            Term("OLLAMA_GPU_OVERHEAD", int(s.extra["gpu_overhead"]), "reserved by OLLAMA_GPU_OVERHEAD")
        )
    left = total - sum(t.bytes for t in terms)
    per_token = sum(_kv(arch, s, 1, streams=1)[arch.layers - gpu_layers :]) if s.extra["kv_offload"] else 0
    fails = kv > left
    fails_says = _does_not_fit(weights, compute, kv, n_ctx, total) if fails else ""
    pool = left - kv if fails else kv
    fit_cells = max(0, left) // per_token // s.block_size * s.block_size if per_token else 0
    p = Plan(
        engine="llamacpp", generation="-", gpu_total=total, utilization=1.0, budget=total, terms=terms,
        kv_pool=pool, kv_per_token=per_token, page_bytes=per_token, block_size=1,
        layers_per_block=gpu_layers, num_blocks=n_ctx, kv_tokens=n_ctx if not fails else fit_cells,
        max_model_len=n_ctx_seq, max_num_seqs=s.max_num_seqs, request_bytes=per_token * n_ctx_seq,
        max_concurrency=n_ctx / n_ctx_seq if n_ctx_seq else 0.0,
        max_len_that_fits=fit_cells if s.extra["unified"] else fit_cells // max(1, s.max_num_seqs),
        context_at_max_seqs=n_ctx_seq, weights_per_gpu=weights, weights_total=whole,
        weights_source=arch.quant.scheme if arch.quant is not None else "F16 GGUF weights",
        pool_units=n_ctx if not fails else 0, request_units=n_ctx_seq, load_budget=total - CONTEXT_BYTES,
        notes=notes + ([fails_says] if fails_says else []),
        warmup_fails=fails_says,  # llama.cpp's start-up allocation fails: what KV102 says
    )  # fmt: skip
    split = (
        ""
        if s.extra["unified"] or s.max_num_seqs == 1
        else f", split over {s.max_num_seqs} slots: {n_ctx_seq:,} each"
    )
    p.lines = [
        f"GPU memory: {gib(total)} ({s.extra['ngl_how']}; {s.extra['fa_how']})",
        *(f"  - {t.label}: {gib(t.bytes)}  ({t.note})" for t in terms),
        *(
            [
                f"  = {gib(left)} left for the KV cache",
                f"KV cache: {n_ctx:,} cells ({s.extra['slots_how']}{split}) x {per_token:,} B per token"
                f" ({s.kv_cache_dtype}/{s.extra['type_v']}) = {gib(kv)}"
                + (": does not fit" if fails else ""),
                f"  (the largest context that fits: {tokens(fit_cells)} cells)",
            ]
            if per_token
            else [_in_host_memory(s, n_ctx, split, gpu_layers)]
        ),
    ]
    return p


def _in_host_memory(s: EngineSettings, n_ctx: int, split: str, gpu_layers: int) -> str:
    """The KV line of a plan whose GPU holds none of the cache: every layer's cache stays with its layer on the
    CPU (-ngl 0), or --no-kv-offload keeps all of it in host memory (llama-kv-cache.cpp: a layer's buffer is the
    CPU's when offload is off or the layer is not offloaded); kvlint models GPU memory, so it is not checked."""
    why = "--no-kv-offload" if not s.extra["kv_offload"] else f"{gpu_layers} layers on the GPU"
    return (
        f"KV cache: {n_ctx:,} cells ({s.extra['slots_how']}{split}) in host memory ({why}), none on the GPU:"
        " not checked"
    )
