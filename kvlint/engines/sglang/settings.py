"""SGLang's settings in force: the deployment's values, the release's defaults for the rest (sglang/defaults.py
holds the release table), each default named in the settings in force (engines/filling.py), never on the
deployment."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, default_label
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.deployment import default
from kvlint.engines import native
from kvlint.engines.filling import Filling
from kvlint.engines.sglang import defaults as sd
from kvlint.engines.sglang.dsa import dsa_fp8_default, dsa_indexer_bytes, dsa_latent_bytes
from kvlint.engines.sglang.plan import MB, Release, plan
from kvlint.record import replace

CHECKPOINT_KV_FROM = (0, 5, 3)  # the first release read that takes the checkpoint's fp8 KV scheme
SPEC_48 = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH")  # max_running_requests 48 by default
SPEC_48_FROM = (0, 5, 3, 0)
AITER_FROM = (0, 5, 5, 0)  # --attention-backend aiter x 0.85 above 8K context
# SGLang splits the pool into full and sliding-window parts only for the architectures
# python/sglang/srt/configs/model_config.py `is_hybrid_swa_model` lists (Llama4, DeepseekV4, GptOss,
# MiMoV2, Step3p5/3p7, Gemma4, Laguna; read at sgl-project/sglang 001adf56); every other sliding-window
# model (Gemma 2/3, Mistral) keeps every layer's KV for every token ("is_hybrid_swa = False, no separate
# SWA pool is created, and every token allocates KV slots in all ... layers", sgl-project/sglang PR 39310).
HYBRID_SWA_FAMILIES = (
    "llama4",
    "deepseek_v4",
    "gpt_oss",
    "mimo_v2",
    "step3p5",
    "step3p7",
    "gemma4",
    "laguna",
)


def _int(v, default: int) -> int:
    return int(v.value) if v is not None and v.value is not None else default


def _extra(f: Filling, key: str):
    return f.option(key)


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """EngineSettings for SGLang; every default applied is named in its `in_force`."""
    version = sd.parse_version(version_text)
    f = Filling.of(d)
    native.carry(f, "sglang")
    tp, pp, dp = _int(f.tensor_parallel, 1), _int(f.pipeline_parallel, 1), _int(d.data_parallel, 1)
    stated_context = _int(f.max_context, 0) or None  # read before the model's own length is filled
    _parallel_and_context(f, arch)
    _memory_defaults(f, _picked(f, arch, gpu, version, (tp, pp, dp), stated_context))
    kv_dtype = _kv_cache_dtype(f, arch, gpu, version)
    if f.block_size is None:
        page, note = _page_size(f)
        f.block_size = default(page, note)
    _speculative_requests(f, version)
    assert f.max_context is not None
    es = EngineSettings(
        engine="sglang",
        version=version_text,
        generation="-",
        tp=tp,
        pp=pp,
        dp=dp,
        max_model_len=int(f.max_context.value),
        max_num_seqs=_int(f.max_sequences, 0),
        max_batched_tokens=int(f.options["chunked_prefill_size"].value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=kv_dtype,
        utilization=_fraction(f, arch, version),
        utilization_default=default_label(f.options["mem_fraction_static"], "SGLang"),
        block_size=int(f.block_size.value),
        enforce_eager=bool(_extra(f, "disable_cuda_graph")),
        hybrid_kv_cache_manager=hybrid_swa(arch) and not bool(_extra(f, "disable_hybrid_swa_memory")),
        chunked_prefill=int(f.options["chunked_prefill_size"].value) > 0,
        extra={k: v.value for k, v in f.options.items()},
        own=_release(arch, gpu, version, kv_dtype),
    )
    if f.max_sequences is None and gpu is not None and gpu.engine_bytes:
        # max_running_requests follows from the pool SGLang sizes (scheduler: min(tokens // 2, request pool))
        f.max_sequences = default(
            plan(arch, gpu, es).max_num_seqs,
            "SGLang default max_running_requests = min(max_total_num_tokens // 2, request pool)",
        )
    return replace(es, in_force=f.in_force())


def _parallel_and_context(f: Filling, arch: ModelArch) -> None:
    """The parallel sizes and context length SGLang takes when the deployment leaves them out."""
    if f.tensor_parallel is None:
        f.tensor_parallel = default(1, "SGLang default --tp-size 1")
    if f.pipeline_parallel is None:
        f.pipeline_parallel = default(1, "SGLang default --pp-size 1")
    if f.max_context is None:
        f.max_context = default(
            arch.max_positions,
            f"SGLang context_length derived from the model config ({arch.max_positions_note})",
        )


def _picked(
    f: Filling,
    arch: ModelArch,
    gpu: GpuSpec | None,
    version: tuple[int, ...] | None,
    parallel: tuple[int, int, int],
    stated_context: int | None,
) -> sd.SglangDefaults:
    """The release's memory defaults for this GPU, model and the options stated (sglang/defaults.py)."""
    tp, pp, dp = parallel
    spec = _extra(f, "speculative_algorithm")
    gpu_mb = gpu.smi_total_mib or (gpu.engine_bytes / MB if gpu.engine_bytes else None) if gpu else None
    stated_chunked = _extra(f, "chunked_prefill_size")
    return sd.defaults(
        gpu_mb,
        tp,
        pp,
        version,
        dp=dp,
        dp_attention=bool(_extra(f, "enable_dp_attention")),
        speculative=str(spec) if spec else None,
        chunked=int(stated_chunked) if stated_chunked else None,
        graph_bs=int(_extra(f, "cuda_graph_max_bs") or 0) or None,
        mla=arch.mla,
        piecewise=_piecewise(f),
        piecewise_max_tokens=int(_extra(f, "piecewise_cuda_graph_max_tokens") or 0) or None,
        cuda_graph=not _extra(f, "disable_cuda_graph"),
        decode_graph=_decode_graph(f),
        family=arch.family,
        arch_name=_arch_name(arch),
        multimodal=bool(arch.vision_params),
        amd=bool(gpu and gpu.vendor == "amd"),
        dsa=bool(dsa_indexer_bytes(arch)),
        lora=bool(_extra(f, "enable_lora") or _extra(f, "lora_adapters")),
        max_total_tokens=int(_extra(f, "max_total_tokens") or 0) or None,
        context_length=stated_context,
        max_running=_int(f.max_sequences, 0) or None,
    )


def _memory_defaults(f: Filling, picked: sd.SglangDefaults) -> None:
    """chunked_prefill_size and mem_fraction_static as the release picks them, where not stated."""
    if "chunked_prefill_size" not in f.options:
        f.options["chunked_prefill_size"] = default(
            picked.chunked_prefill_size, f"SGLang default chunked_prefill_size ({picked.source})"
        )
    if "mem_fraction_static" not in f.options:
        f.options["mem_fraction_static"] = default(
            picked.mem_fraction_static, f"SGLang default mem_fraction_static ({picked.source})"
        )


def _kv_cache_dtype(f: Filling, arch: ModelArch, gpu: GpuSpec | None, version: tuple[int, ...] | None) -> str:
    """The KV-cache dtype SGLang allocates: stated, or its default for the model and GPU (named in `f`)."""
    fp8_auto = dsa_fp8_default(arch, gpu) or checkpoint_kv_fp8(arch, version)
    if f.kv_cache_dtype is None and dsa_fp8_default(arch, gpu):
        f.kv_cache_dtype = default(
            "fp8_e4m3",
            "SGLang default kv_cache_dtype for a DeepSeek-sparse-attention model on SM100+: fp8_e4m3",
        )
    if f.kv_cache_dtype is None and checkpoint_kv_fp8(arch, version):
        f.kv_cache_dtype = default(
            "fp8_e4m3",
            "SGLang default kv_cache_dtype auto: the checkpoint's KV scheme (ModelOpt kv_cache_quant_algo FP8)",
        )
    if f.kv_cache_dtype is None:
        f.kv_cache_dtype = default("auto", "SGLang default kv_cache_dtype auto (the model's dtype)")
    kv_dtype = str(f.kv_cache_dtype.value)
    if kv_dtype.lower() == "auto" and fp8_auto:
        kv_dtype = "fp8_e4m3"  # SGLang rewrites a stated auto the same way
    return kv_dtype


def _speculative_requests(f: Filling, version: tuple[int, ...] | None) -> None:
    """max_running_requests 48 by default with a speculative algorithm (from v0.5.3)."""
    spec = _extra(f, "speculative_algorithm")
    spec_48 = bool(spec) and str(spec).upper() in SPEC_48 and (version or SPEC_48_FROM) >= SPEC_48_FROM
    if f.max_sequences is None and spec_48:
        # _handle_speculative_decoding, after the memory defaults (v0.5.3 server_args.py:1058-1060, 1131-1133;
        # v0.5.11 :3430-3433, 3452-3455, 3563-3566; v0.5.23 arg_groups/speculative_hook.py:1086-1094);
        # v0.4.3 kept the request pool (s-055: max_running_requests=4097 with EAGLE)
        f.max_sequences = default(
            48, f"SGLang default max_running_requests 48 with --speculative-algorithm {spec}"
        )


def _release(arch: ModelArch, gpu: GpuSpec | None, version: tuple[int, ...] | None, kv_dtype: str) -> Release:
    """What the plan needs of the release."""
    return Release(
        version_known=version is not None and version[:3] <= sd.rules(None).first[:3],  # newer: said
        era=sd.era(version),
        mm_reserve_bytes=sd.rules(version).mm_reserve_mb * MB if arch.vision_params else 0,
        dsa_latent_bytes=dsa_latent_bytes(arch, gpu, version, kv_dtype),
        mamba_pool=sd.rules(version).mamba_pool,
        radix_off=_radix_off(arch, sd.rules(version).mamba_pool),
    )


# model_runner's mamba2_config classes, whose radix cache v0.5.4-v0.5.6 turn off ("FalconH1Config model
# detected, disable radix cache": sglang==0.5.4 model_executor/model_runner.py:402-405, 1490-1495)
MAMBA2_ARCHS = ("FalconH1ForCausalLM", "NemotronHForCausalLM", "NemotronH_Nano_VL_V2")


def _radix_off(arch: ModelArch, mamba_pool: str) -> bool:
    """The release runs this hybrid model without the radix cache whatever was stated: every hybrid up to
    v0.5.3 (the only ones it runs: Qwen3-Next, Falcon-H1), the Mamba-2 ones in v0.5.4-v0.5.6."""
    if not arch.state_layers:
        return False
    return mamba_pool == "fixed" or (mamba_pool == "ratio" and _arch_name(arch).startswith(MAMBA2_ARCHS))


def checkpoint_kv_fp8(arch: ModelArch, version: tuple[int, ...] | None) -> bool:
    """kv_cache_dtype auto on a ModelOpt checkpoint whose quant config says kv_cache_quant_algo FP8: SGLang
    allocates an fp8 (e4m3) pool (model_runner configure_kv_cache_dtype: read in sglang 0.5.3 :1399-1402,
    0.5.11 :2210-2227 and 0.5.23 mem_cache/kv_cache_dtype.py:49-58; absent in 0.4.3, the releases between
    not read). Only the ModelOpt quant configs carry the attribute up to v0.5.22 (layers/quantization)."""
    quant = arch.quant
    fp8 = quant is not None and quant.kv_cache_dtype == "fp8" and quant.method.startswith("modelopt")
    return fp8 and (version is None or tuple(version) >= CHECKPOINT_KV_FROM)


def _arch_name(arch: ModelArch) -> str:
    """The config's architectures[0] (SGLang's allowlists name model classes), '' when not known."""
    names = arch.parsed_from[0].get("architectures") if arch.parsed_from else None
    return str(names[0]) if isinstance(names, list) and names else ""


def hybrid_swa(arch: ModelArch) -> bool:
    """Whether SGLang gives this model a separate sliding-window pool (`is_hybrid_swa_model`)."""
    return arch.family.startswith(HYBRID_SWA_FAMILIES)


def _piecewise(f: Filling) -> bool | None:
    """--enable-piecewise-cuda-graph (v0.5.3-v0.5.9) / --disable-piecewise-cuda-graph (v0.5.10 on);
    from v0.5.14 --disable-prefill-cuda-graph and --cuda-graph-backend-prefill (an explicit backend
    skips the rules that would turn it off)."""
    backend = str(_extra(f, "cuda_graph_backend_prefill") or "").lower()
    if _extra(f, "disable_piecewise_cuda_graph") or backend == "disabled":
        return False
    return True if _extra(f, "enable_piecewise_cuda_graph") or backend else None


def _decode_graph(f: Filling) -> bool:
    """Whether decode CUDA graphs are captured (--disable-cuda-graph; v0.5.14 on also per phase)."""
    off = _extra(f, "disable_decode_cuda_graph") or _extra(f, "disable_cuda_graph")
    return not off and str(_extra(f, "cuda_graph_backend_decode") or "").lower() != "disabled"


def _fraction(f: Filling, arch: ModelArch, version: tuple[int, ...] | None) -> float:
    """The mem_fraction_static the model runner uses: the stated or default value, reduced for a
    checkpoint with a vision tower as the release does (sglang_defaults.multimodal_factor)."""
    value = f.options["mem_fraction_static"]
    # --attention-backend aiter (ROCm) above 8K context: x 0.85 for its workspace, stated or default fraction
    # (server_args.py _handle_attention_backend_compatibility from v0.5.5 :1272, v0.5.11 :2673; v0.5.23
    # arg_groups/attention_hook.py:268; absent in v0.5.4). Only when stated: SGLang picks it later otherwise.
    assert f.max_context is not None
    aiter = str(_extra(f, "attention_backend") or "") == "aiter" and int(f.max_context.value) > 8192
    fraction = float(value.value) * (0.85 if aiter and (version or AITER_FROM) >= AITER_FROM else 1.0)
    if not arch.vision_params:
        return fraction
    factor = sd.multimodal_factor(version, value.origin == "default", arch.vision_layers, arch.vision_hidden)
    return fraction * factor  # unrounded, as server_args / the model runner keep it


def _page_size(f: Filling) -> tuple[int, str]:
    """--page-size defaults to 1; the MLA kernels that need pages force their own (server_args.py:
    "FlashMLA only supports a page_size of 64", "Cutlass MLA only supports a page_size of 128")."""
    backend = str(_extra(f, "attention_backend") or "")
    if backend == "flashmla":
        return 64, "SGLang sets page_size 64 for --attention-backend flashmla"
    if backend == "cutlass_mla":
        return 128, "SGLang sets page_size 128 for --attention-backend cutlass_mla"
    return 1, "SGLang default --page-size 1"
