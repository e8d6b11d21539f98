"""llama.cpp's memory on one GPU, from its source (ggml-org/llama.cpp as Ollama vendors it, data/releases.json).

llama.cpp allocates fixed buffers at start-up, each logged by name: the model buffer of the offloaded layers
(`load_tensors: CUDA0 model buffer size`), the KV cache of n_ctx cells (`llama_kv_cache: CUDA0 KV buffer
size`), and the compute buffer its scheduler reserves for one ubatch (`llama_context: CUDA0 compute buffer
size`). There is no memory fraction and no pool sized from what is left: when a buffer does not fit,
ggml's CUDA allocator fails ("cudaMalloc failed: out of memory") and so does the context ("failed to
allocate buffer for kv cache", llama-kv-cache.cpp:188; llama_init_from_model returns null), and llama-server
exits. `-c` is the cells of the whole server; without a unified cache its `-np` slots split it: each
slot gets `n_ctx_seq = n_ctx / n_seq_max` (llama-context.cpp:151-155 at ec98e2002). Ollama's runner asks
for num_ctx x num_parallel cells (ollama/ollama@v0.15.5 llm/server.go:174) and, when the model does not fit,
its scheduler loads fewer layers on the GPU instead of failing (it runs, slowly).

The compute buffer (compute.py) and the memory outside llama.cpp's buffers are kvlint's estimates, said so.
"""

from __future__ import annotations

from typing import Any

from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.codes import NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment, Value, default
from kvlint.engines import native
from kvlint.engines.base import SettingRefused
from kvlint.engines.filling import Filling
from kvlint.engines.llamacpp import fit, ollama_runner, overrides, split
from kvlint.engines.llamacpp import layers as L
from kvlint.engines.llamacpp.releases import llama_default, ollama_default
from kvlint.findings import Issue, Severity
from kvlint.record import replace
from kvlint.units import GIB

N_BATCH, N_UBATCH = 2048, 512  # common/common.h:279-280 at 3cfa9c3f (ollama/ollama@v0.13.0 vendored)
# a weight in host memory goes to the GPU for an op of at least this many tokens (the CPU-kept tensors of
# --override-tensor among them), copied into the compute buffer: ggml-cuda.cu:4940-4943 min_batch_size at
# ollama/ollama@v0.15.5, ggml-backend.cpp:865 (op_offload, on by default: llama-context.cpp:2392); llama-server's
# --no-op-offload turns it off (common/common.h:430 no_op_offload, common/common.cpp:1401 `cparams.op_offload =
# !params.no_op_offload`, passed to ggml_backend_sched_new at llama-context.cpp:321): no weight is copied in
OFFLOAD_BATCH = 32
OLLAMA_PARALLEL_AUTO = 4  # server/sched.go:59 defaultParallel (ollama v0.5.7), tried before 1


def _int(f: Filling, key: str, fallback: int) -> int:
    v = f.options.get(key)
    return int(v.value) if v is not None and isinstance(v.value, int) and v.value > 0 else fallback


def _go_bool(f: Filling, key: str) -> bool:
    """An Ollama boolean variable as envconfig.BoolWithDefault reads it (envconfig/config.go:151-164 at v0.15.5):
    unset or empty false; strconv.ParseBool's false words false; anything else true, a word it cannot parse too."""
    v = f.options.get(key)
    text = str(v.value).strip() if v is not None and v.value is not None else ""
    return text not in ("", "0", "f", "F", "false", "FALSE", "False")


def _flag(f: Filling, key: str) -> bool:
    v = f.options.get(key)
    return bool(v is not None and v.value is True)


def _gpu_layers(f: Filling, version: str | None) -> tuple[int, str]:
    said = f.options.get("n_gpu_layers")
    if said is None:
        row = llama_default("n_gpu_layers", version)
        f.options["n_gpu_layers"] = default(row.value, f"llama.cpp default -ngl {row.value} ({row.source})")
        return int(str(row.value)), f"-ngl {row.value} (llama.cpp default)"
    text = str(said.value).strip().lower()
    if text in ("auto", "all", "-1"):
        return 999, f"-ngl {text}"
    try:
        return int(text), f"-ngl {text}"
    except ValueError:
        raise SettingRefused(
            f"llama.cpp: -ngl {said.value!r} is not a number, 'auto' or 'all'", said.where
        ) from None


def _fa(f: Filling, ollama: bool, version: str | None) -> tuple[bool, str]:
    said = f.options.get("flash_attn")
    if said is not None:
        on = str(said.value).strip().lower() in ("on", "1", "true", "enabled", "auto")
        return on, f"flash attention {said.value}"
    row = ollama_default("flash_attention", version) if ollama else llama_default("flash_attn", version)
    on = row.value in ("auto", True)  # auto: on where the GPU and model support it (CUDA: kvlint assumes so)
    return on, f"flash attention {row.value} (default)"


def _slots(f: Filling, ollama: bool, version: str | None) -> tuple[int, bool, str]:
    """(slots, unified cache, how)."""
    if f.max_sequences is not None:
        return int(f.max_sequences.value), _flag(f, "kv_unified"), "-np"
    if ollama:
        row = ollama_default("num_parallel", version)
        n = OLLAMA_PARALLEL_AUTO if row.value == "auto" else int(str(row.value))
        f.max_sequences = default(n, f"Ollama default OLLAMA_NUM_PARALLEL ({row.source})")
        return n, False, "OLLAMA_NUM_PARALLEL (default)"
    row = llama_default("auto_slots", version)
    if row.value and "kv_unified" not in f.options:
        f.max_sequences = default(4, f"llama-server sets 4 slots over a unified KV cache ({row.source})")
        return 4, True, "4 slots, unified (llama-server default)"
    f.max_sequences = default(1, "llama.cpp default -np 1")
    return 1, _flag(f, "kv_unified"), "-np 1 (default)"


def _context(f: Filling, arch: ModelArch, gpu: GpuSpec | None, ollama: bool, version: str | None) -> int:
    if f.max_context is not None:
        n = int(f.max_context.value)
        if ollama:
            return _to_train(arch, n, version)[0]
        return n if n > 0 else arch.max_positions  # -c 0: the training context
    if ollama:
        row = ollama_default("num_ctx", version)
        n, cut = _to_train(arch, int(str(row.value)) if row.value != "vram" else _vram_ctx(gpu), version)
        f.max_context = default(n, f"Ollama default context ({row.source}){cut}")
        return n
    row = llama_default("n_ctx", version)
    n = int(str(row.value)) or arch.max_positions
    f.max_context = default(n, f"llama.cpp default -c {row.value} ({row.source})")
    return n


def _to_train(arch: ModelArch, n: int, version: str | None) -> tuple[int, str]:
    """Ollama's per-request context, cut to the model's training context where the release does (and why)."""
    row = ollama_default("ctx_to_train", version)
    if row.value is True and arch.max_positions and n > arch.max_positions:
        return (
            arch.max_positions,
            f", cut to the model's {arch.max_positions:,} training positions ({row.source})",
        )
    return n, ""


def _ctx_fit(f: Filling, ollama: bool, version: str | None) -> bool:
    """llama.cpp's --fit may cut the context (autofit.py): its build fits by default, -c is left unset and
    --fit is not off. Ollama sizes its own context."""
    if ollama or f.max_context is not None or not llama_default("fit_ctx", version).value:
        return False
    said = f.options.get("fit")
    return said is None or str(said.value).strip().lower() not in ("off", "0", "false")


def _vram_ctx(gpu: GpuSpec | None) -> int:
    total = (gpu.engine_bytes or 0) if gpu is not None else 0
    return 262144 if total >= 47 * GIB else 32768 if total >= 23 * GIB else 4096


def _cache_types(f: Filling, ollama: bool, fa: bool, fa_how: str) -> tuple[str, str]:
    """--cache-type-k / --cache-type-v (Ollama: OLLAMA_KV_CACHE_TYPE for both), checked as llama.cpp does."""
    type_k = str(f.kv_cache_dtype.value).lower() if f.kv_cache_dtype is not None else "f16"
    said_v = f.options.get("cache_type_v")
    type_v = str(said_v.value).lower() if said_v is not None else ("f16" if not ollama else type_k)
    if ollama and type_k not in ("f16", "f32", "bf16") and not fa:
        type_k = type_v = "f16"  # llm/server.go:225-228: a quantized type needs flash attention, else dropped
    type_k = _known_type(f, "K", type_k, f.kv_cache_dtype)
    type_v = _known_type(f, "V", type_v, said_v)
    if type_v not in ("f16", "f32", "bf16") and not fa:
        raise SettingRefused(
            f"llama.cpp: a quantized V cache ({type_v}) needs flash attention, which is off ({fa_how}):"
            ' llama_init_from_model fails ("V cache quantization requires flash_attn",'
            " llama-context.cpp:2442 at ec98e2002)",
            said_v.where if said_v is not None else f.d.where,
        )
    return type_k, type_v


def settings(d: Deployment, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """EngineSettings for llama-server or Ollama; every default applied is named in its `in_force`."""
    f = Filling.of(d)
    native.carry(f, "llamacpp")
    server = f.options.get("llamacpp_server")
    ollama = server is not None and server.value == "ollama"
    ngl, ngl_how = (999, "Ollama places layers by its estimate") if ollama else _gpu_layers(f, version_text)
    fa, fa_how = _fa(f, ollama, version_text)
    slots, unified, slots_how = _slots(f, ollama, version_text)
    ctx_fit = _ctx_fit(f, ollama, version_text)
    n_ctx = _context(f, arch, gpu, ollama, version_text)
    if ollama:
        n_ctx *= max(1, slots)  # llm/server.go:174 `KvSize: opts.NumCtx * numParallel`
    type_k, type_v = _cache_types(f, ollama, fa, fa_how)
    _cpu_layers(f, arch, ngl, ollama)
    devices = {"n_devices": 1} if ollama else split.settings(f)
    pad_rule = _default("ctx_pad", ollama, version_text).value
    pad_to = (256 if fa else 32) if pad_rule == "fa" else int(str(pad_rule))
    n_ctx = L.pad(n_ctx, pad_to)
    n_seq = max(1, slots)
    n_ctx_seq = n_ctx if unified else L.pad(n_ctx // n_seq, pad_to)
    n_ctx = n_ctx if unified else n_ctx_seq * n_seq
    moved = None if ollama else overrides.moved(f, arch, int(devices["n_devices"]))
    runner, runner_why = (
        ollama_runner.runner(arch, version_text, _go_bool(f, "ollama_new_engine")) if ollama else ("", "")
    )
    n_ubatch = min(_int(f, "n_ubatch", N_UBATCH), _int(f, "n_batch", N_BATCH))
    extra = {k: v.value for k, v in f.options.items()}
    extra.update(
        n_ctx=n_ctx,
        n_ctx_seq=n_ctx_seq,
        unified=unified,
        slots_how=slots_how,
        ngl=ngl,
        ngl_how=ngl_how,
        flash_attn=fa,
        fa_how=fa_how,
        type_v=type_v,
        ollama=ollama,
        pad=pad_to,
        n_ubatch=n_ubatch,
        moved=moved,
        ollama_runner=runner,
        runner_why=runner_why,
        weight_copy=L.largest_moved(arch, moved)
        if n_ubatch >= OFFLOAD_BATCH and not _flag(f, "no_op_offload")
        else 0,
        swa_full=_flag(f, "swa_full"),
        kv_offload=not _flag(f, "no_kv_offload"),
        kv_streams=bool(_default("kv_streams", ollama, version_text).value),
        ctx_fit=ctx_fit,
        **devices,
    )
    es = EngineSettings(
        engine="llamacpp",
        version=version_text,
        generation="-",
        tp=1,
        pp=1,
        dp=1,
        max_model_len=n_ctx_seq,
        max_num_seqs=n_seq,
        max_batched_tokens=_int(f, "n_batch", N_BATCH),
        dtype=None,
        quantization=None,
        kv_cache_dtype=type_k,
        utilization=1.0,
        block_size=pad_to,
        enforce_eager=False,
        hybrid_kv_cache_manager=False,
        chunked_prefill=True,
        extra=extra,
        in_force=f.in_force(),
    )
    if ollama and gpu is not None and gpu.engine_bytes:
        counts = fit.ollama_placement(arch, gpu, es, split.visible(f))
        if len(counts) > 1:
            es = replace(es, extra={**es.extra, **split.spread_by_ollama(f, counts)})
        _ollama_cpu_layers(f, arch, sum(counts))
        es = replace(es, in_force=f.in_force())
    return es


def _ollama_cpu_layers(f: Filling, arch: ModelArch, ngl: int) -> None:
    """Ollama's scheduler loads fewer layers than the model has when they do not fit (fit.ollama_layers): it
    runs, slowly, with the rest on the CPU; a warning with the figure, as for llama-server's -ngl."""
    if ngl > arch.layers:
        return
    issue = Issue(
        NOT_CHECKABLE,
        f"{f.d.label()}: Ollama's scheduler loads {ngl} of {arch.layers} layers on the GPU ({arch.layers - ngl} on"
        " the CPU, with their KV cache): it runs, slowly; kvlint checks the GPU's share only",
        (f.d.model.where if f.d.model is not None else None) or f.d.where,
        severity=Severity.WARNING,
    )
    if issue not in f.said:
        f.said.append(issue)


def _known_type(f: Filling, name: str, t: str, said: Value | None) -> str:
    """A cache type llama.cpp accepts, or f16 with a KV005: llama-server exits on any other at start-up
    (common/arg.cpp kv_cache_type_from_str throws "Unsupported cache type")."""
    if t in L.KV_TYPE_BYTES:
        return t
    issue = Issue(
        UNPARSED_SETTING,
        f"llama.cpp: kv_cache_dtype {t!r} (--cache-type-{name.lower()}) is not a cache type it accepts"
        f" ({', '.join(L.KV_TYPE_BYTES)}; common/arg.cpp kv_cache_types): llama-server exits with"
        " 'Unsupported cache type'; planned at f16",
        (said.where if said is not None else None) or f.d.where,
    )
    if issue not in f.said:
        f.said.append(issue)
    return "f16"


def _default(key: str, ollama: bool, version: str | None) -> Any:
    """The row of the release table in force (Ollama's for Ollama, llama.cpp's builds otherwise)."""
    return ollama_default(key, version) if ollama else llama_default(key, version)


def _cpu_layers(f: Filling, arch: ModelArch, ngl: int, ollama: bool) -> None:
    """-ngl below the layer count: the first layers (and their KV cache) run on the CPU (llama-model.cpp:2396)."""
    if ollama or ngl >= arch.layers:
        return
    said = f.options.get("n_gpu_layers")
    where = (said.where if said is not None else None) or f.d.where
    on_cpu = arch.layers - max(0, ngl)
    issue = Issue(
        NOT_CHECKABLE,
        f"{f.d.label()}: {on_cpu} of {arch.layers} layers on the CPU (-ngl {ngl}): it runs, slowly; kvlint checks"
        " the GPU's share only",
        where,
        severity=Severity.WARNING,
    )
    if issue not in f.said:
        f.said.append(issue)


__all__ = ["settings"]
