"""llama.cpp's buffers on each of several GPUs, and whether each GPU's fit (fit.py plans one GPU).

Every GPU allocates its own buffers (devices.py says which layers it holds): the model buffer of its layers
("load_tensors: CUDA1 model buffer size"), the KV cache of those layers ("llama_kv_cache: CUDA1 KV buffer
size"), and a compute buffer for its share of the graph (src/llama-context.cpp:425-443 at ec98e2002, one per
backend). A GPU whose buffers do not fit fails its allocation ("cudaMalloc failed: out of memory") whatever
the others have free: the fit is per GPU, not one pool.

kvlint's estimates, said in the plan: each GPU's compute buffer is the largest phase of one ubatch through its
own layers (the logits only on the GPU holding the output layer); with every layer offloaded llama.cpp runs
them as a pipeline (src/llama-context.cpp:295-300, "pipeline parallelism enabled (n_copies=4)") and each GPU
also keeps four copies of its split's inputs (compute.py stage_bytes); each GPU has its own CUDA context.
"""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, Plan, Term
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.llamacpp import layers as L
from kvlint.engines.llamacpp.compute import CONTEXT_BYTES, OWN_ENGINE, compute_bytes, pipelined, stage_bytes
from kvlint.engines.llamacpp.devices import Share, shares, split_points
from kvlint.engines.llamacpp.releases import llama_default, ollama_default
from kvlint.record import replace
from kvlint.units import gib, tokens

COMPUTE_NOTE = "kvlint's estimate: the largest phase of one ubatch through this GPU's layers"
OLLAMA_NOTE = COMPUTE_NOTE + "; Ollama's own engine runs no pipeline"
PIPELINE_NOTE = (
    COMPUTE_NOTE + ", and the pipeline's 4 copies of its inputs (hidden state, positions, KQ mask;"
    " ggml-backend.cpp GGML_SCHED_MAX_COPIES)"
)


Row = tuple[Share, int, int, int]  # a GPU's share, its compute buffer, the room left for KV, KV per token


def rows(
    arch: ModelArch,
    gpu: GpuSpec,
    s: EngineSettings,
    kv_layers: list[int],
    per_token: list[int],
    pipe: bool | None = None,
) -> list[Row]:
    """Each GPU's share of the layers, its compute buffer, the memory its KV cache may use, and its KV bytes
    per token: `kv_layers` is each layer's KV bytes at the plan's cells, `per_token` at one cell of one
    stream (fit.py's `_kv`); `pipe` whether the compute buffers hold the pipeline's copies (None: when
    llama.cpp runs the split as a pipeline)."""
    total = gpu.engine_bytes or 0
    n_dev = int(s.extra["n_devices"])
    ngl = min(int(s.extra["ngl"]), arch.layers + 1)
    layers_w, _embed, output_w = L.placed(arch, s.extra.get("moved"))
    points = split_points(s.extra.get("tensor_split") or [1.0] * n_dev)
    kv_on = s.extra["kv_offload"]
    held = shares(layers_w, output_w, kv_layers if kv_on else [], ngl, points)
    token = shares([0] * len(layers_w), 0, per_token if kv_on else [], ngl, points)
    pipe = pipelined(arch, s) if pipe is None else pipe
    first = next((h.device for h in held if h.layers), None)
    out = []
    for share, one in zip(held, token, strict=True):
        compute = _compute(arch, s, share, pipe, share.device == first)
        out.append((share, compute, total - share.weights - compute - CONTEXT_BYTES, one.kv))
    return out


def _compute(arch: ModelArch, s: EngineSettings, share: Share, pipe: bool, first: bool) -> int:
    """A GPU's compute buffer: none without layers or the output; in the pipeline, with its input copies."""
    if not share.layers and not share.output:
        return 0
    if share.device and s.extra.get("weight_copy"):  # the first GPU runs the CPU-kept tensors' ops
        s = replace(s, extra={**s.extra, "weight_copy": 0})
    if pipe:
        return stage_bytes(arch, s, share.output, first, share.layers > 0)
    return compute_bytes(arch, s, share.output)[0]


def surplus(found: list[Row]) -> tuple[int, int]:
    """(the KV cache of every GPU, the memory left on them all once it is in): what --fit weighs
    (src/llama.cpp:228 `global_surplus = sum_projected_free - nd*margin`, with the margin left to it)."""
    return sum(r[0].kv for r in found), sum(r[2] - r[0].kv for r in found)


def layout(
    arch: ModelArch, gpu: GpuSpec, s: EngineSettings, kv_layers: list[int], per_token: list[int]
) -> Plan:
    """The plan over `s.extra["n_devices"]` GPUs of one type (rows() has the arguments)."""
    total = gpu.engine_bytes or 0
    rows_, compute_note = _rows_in_force(arch, gpu, s, kv_layers, per_token)
    ngl = min(int(s.extra["ngl"]), arch.layers + 1)
    layers_all, embed, output_w = L.weights_by_layer(arch)
    # the GPU that binds: the fewest cells its room holds (kv_pool, kv_per_token and the request are its own,
    # per GPU, as a pipeline stage's are; stage_pools has every GPU's KV cache)
    bind, compute, room, per = min(rows_, key=lambda r: r[2] / r[3] if r[3] else float("inf"))
    fails = [r for r in rows_ if r[0].kv > r[2]]
    n_ctx, n_ctx_seq = int(s.extra["n_ctx"]), int(s.extra["n_ctx_seq"])
    kv = sum(r[0].kv for r in rows_)
    fit_cells = min((max(0, r[2]) // r[3] // s.block_size * s.block_size for r in rows_ if r[3]), default=0)
    gpu_layers = min(ngl, arch.layers)
    what = f"GPU {bind.device}: {bind.layers} of {arch.layers} layers" + (
        " and the output layer" if bind.output else ""
    )
    terms = [
        Term("weights", bind.weights, f"{what} (token_embd stays on the CPU)"),
        Term("compute buffer", compute, compute_note),
        Term(
            "CUDA context", CONTEXT_BYTES, "CUDA context and cuBLAS workspace on each GPU (kvlint assumption)"
        ),
    ]
    says = _fails(fails, total, n_ctx) + _even(arch, gpu, s, kv_layers, per_token) if fails else ""
    p = Plan(
        engine="llamacpp", generation="-", gpu_total=total, utilization=1.0, budget=total, terms=terms,
        kv_pool=room - bind.kv if fails else bind.kv, kv_per_token=per, page_bytes=per,
        block_size=1, layers_per_block=gpu_layers, num_blocks=n_ctx, kv_tokens=fit_cells if fails else n_ctx,
        max_model_len=n_ctx_seq, max_num_seqs=s.max_num_seqs, request_bytes=per * n_ctx_seq,
        max_concurrency=n_ctx / n_ctx_seq if n_ctx_seq else 0.0,
        max_len_that_fits=fit_cells if s.extra["unified"] else fit_cells // max(1, s.max_num_seqs),
        context_at_max_seqs=n_ctx_seq, weights_per_gpu=max(r[0].weights for r in rows_),
        weights_total=sum(layers_all) + embed + (output_w if arch.lm_head_params else 0),
        weights_source=arch.quant.scheme if arch.quant is not None else "F16 GGUF weights",
        stage=bind.device, stage_pools=[r[0].kv for r in rows_],
        stage_compute=[r[1] for r in rows_], pool_units=0 if fails else n_ctx,
        request_units=n_ctx_seq, load_budget=total - CONTEXT_BYTES,
        notes=[f"{s.extra['split_how']}; each GPU must hold its own buffers"] + ([says] if says else []),
        warmup_fails=says,
    )  # fmt: skip
    p.lines = _lines(s, gpu, rows_, kv, sum(r[3] for r in rows_), fit_cells)
    return p


def _rows_in_force(
    arch: ModelArch, gpu: GpuSpec, s: EngineSettings, kv_layers: list[int], per_token: list[int]
) -> tuple[list[Row], str]:
    """The rows llama.cpp ends up with, and the compute term's note: a pipeline whose copies leave a GPU
    short is reserved again without them on builds that retry (releases.json `pp_fallback`), when every
    GPU then fits; the KV cache is allocated before the compute buffers, so only they are redone."""
    runner = f"; {s.extra['runner_why']}" if s.extra.get("runner_why") else ""
    if not pipelined(arch, s):
        own = s.extra.get("ollama_runner") == OWN_ENGINE
        return rows(arch, gpu, s, kv_layers, per_token, pipe=False), (
            OLLAMA_NOTE if own else COMPUTE_NOTE
        ) + runner
    piped = rows(arch, gpu, s, kv_layers, per_token, pipe=True)
    # Ollama's release table for the llama.cpp it vendors (ollama_releases.json), llama.cpp's builds otherwise
    retry = (ollama_default if s.extra["ollama"] else llama_default)("pp_fallback", s.version)
    if not any(r[0].kv > r[2] for r in piped) or not retry.value:
        return piped, PIPELINE_NOTE + runner
    plain = rows(arch, gpu, s, kv_layers, per_token, pipe=False)
    if any(r[0].kv > r[2] for r in plain):
        return piped, PIPELINE_NOTE + runner
    return plain, (
        COMPUTE_NOTE
        + ": with the pipeline's 4 copies of its inputs a GPU's buffers do not fit, and llama.cpp"
        ' reserves them again without ("compute buffer allocation failed, retrying without pipeline'
        f' parallelism"; {retry.source})'
    )


def _even(
    arch: ModelArch, gpu: GpuSpec, s: EngineSettings, kv_layers: list[int], per_token: list[int]
) -> str:
    """What the split by free memory would do instead of a stated --tensor-split ('' with none stated)."""
    if not s.extra.get("tensor_split") or s.extra["ollama"]:
        return ""
    even = rows(arch, gpu, replace(s, extra={**s.extra, "tensor_split": None}), kv_layers, per_token)
    if any(r[0].kv > r[2] for r in even):
        return ""
    return "; without --tensor-split (the split by free memory) every GPU's buffers fit"


def _fails(fails: list[Row], total: int, n_ctx: int) -> str:
    share, compute, _left, _ = fails[0]
    which = (
        f"GPU {share.device}'s buffers do not fit it"
        if len(fails) == 1
        else f"the buffers of GPUs {', '.join(str(r[0].device) for r in fails)} do not fit them; on GPU {share.device}"
    )
    return (
        f"{which}: weights {gib(share.weights)} ({share.layers} layers{' and the output layer' if share.output else ''})"
        f" + compute {gib(compute)} + KV cache {gib(share.kv)} (its layers' share of {n_ctx:,} cells) exceed the"
        f" {gib(total)} of the GPU less {gib(CONTEXT_BYTES)} of CUDA context, whatever the other GPUs have free;"
        ' llama.cpp fails to allocate ("cudaMalloc failed: out of memory", "failed to allocate buffer for kv cache")'
        " and llama-server exits"
    )


def _lines(s: EngineSettings, gpu: GpuSpec, rows: list[Row], kv: int, per: int, fit: int) -> list[str]:
    total = gpu.engine_bytes or 0
    out = [
        f"GPU memory: {len(rows)} x {gib(total)} ({s.extra['ngl_how']}; {s.extra['fa_how']}; {s.extra['split_how']})"
    ]
    for share, compute, left, _ in rows:
        out.append(
            f"  - GPU {share.device}: {share.layers} layers{' and the output layer' if share.output else ''}:"
            f" weights {gib(share.weights)} + compute {gib(compute)} + CUDA context {gib(CONTEXT_BYTES)}"
            f" + KV cache {gib(share.kv)} = {gib(total - left + share.kv)}"
            + (": does not fit" if share.kv > left else "")
        )
    n_ctx = int(s.extra["n_ctx"])
    out += [
        f"KV cache: {n_ctx:,} cells ({s.extra['slots_how']}) x {per:,} B per token over the GPUs"
        f" ({s.kv_cache_dtype}/{s.extra['type_v']}) = {gib(kv)}",
        f"  (the largest context that fits every GPU: {tokens(fit)} cells)",
    ]
    return out


__all__ = ["layout", "rows", "surplus"]
