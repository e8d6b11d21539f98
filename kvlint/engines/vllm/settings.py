"""vLLM's settings: what the deployment states, completed with vLLM's defaults by release
(vllm/versions.py reads the release table); every default applied is named, in the settings in force
(engines/filling.py), never on the deployment."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, default_label
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.deployment import default
from kvlint.engines.base import SettingRefused
from kvlint.engines.filling import Filling
from kvlint.engines.vllm.versions import (
    capped_seqs,
    chunked_local_hybrid,
    cite,
    connector_keeps_hybrid,
    default_batching,
    default_utilization,
    describe,
    generation,
    lookup,
    mla_block_size,
    parse_version,
    subtracts_cuda_graphs,
    throughput_mode,
    v0_long_context_chunk,
)


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """EngineSettings for vLLM; every default applied is named in its `in_force`."""
    version = parse_version(version_text)
    use_v1 = d.extra.get("VLLM_USE_V1")
    gen = generation(version, str(use_v1.value) if use_v1 else None, encoder_decoder=arch.cross_layers > 0)
    vname = f"vLLM {version_text}" if version_text else "vLLM"
    auto = d.extra.get("max_model_len_auto")
    if auto is not None and version is not None and not lookup("max_model_len_auto", version).value:
        raise SettingRefused(
            f"{vname} refuses --max-model-len auto / -1: before v0.14.0 it is a whole number above 0"
            f" ({lookup('max_model_len_auto', version).source}); 'auto' and -1 came in v0.14.0"
            f" ({lookup('max_model_len_auto', (0, 14, 0)).source})",
            auto.where,
        )
    f = Filling.of(d)
    _default_shape(f, arch, vname)
    _default_batching(f, gpu, version, gen, arch)
    _default_cache(f, version, arch, gpu)
    return _engine_settings(f, arch, gpu, version, version_text, gen)


def _default_shape(f: Filling, arch: ModelArch, vname: str) -> None:
    """Parallelism and max_model_len, when the deployment leaves them out."""
    if f.tensor_parallel is None:
        f.tensor_parallel = default(1, f"{vname} default tensor_parallel_size 1")
    if f.pipeline_parallel is None:
        f.pipeline_parallel = default(1, f"{vname} default pipeline_parallel_size 1")
    if f.max_context is None:
        f.max_context = default(
            arch.max_positions, f"max_model_len derived from the model config ({arch.max_positions_note})"
        )


def _default_batching(
    f: Filling, gpu: GpuSpec | None, version: tuple[int, ...] | None, gen: str, arch: ModelArch
) -> None:
    """max_num_seqs and max_num_batched_tokens, when the deployment leaves them out."""
    d = f.d
    assert f.max_context is not None
    context = int(f.max_context.value)
    seqs, batched, note = default_batching(gpu, version, gen, context)
    stated_chunked = None if d.chunked_prefill is None else bool(d.chunked_prefill.value)
    extra = {k: v.value for k, v in d.extra.items()}
    chunk = v0_long_context_chunk(version, arch, context, extra, stated_chunked) if gen == "V0" else 0
    mode = d.extra.get("performance_mode")
    if gen == "V1" and mode is not None and throughput_mode(version, mode.value):
        seqs, batched = 2 * seqs, 2 * batched
        note += f"; doubled by --performance-mode throughput ({describe('performance_mode', version)})"
    if f.max_batched_tokens is None:
        tok_note = note
        if chunk:
            batched, tok_note = (
                chunk,
                (
                    f"vLLM V0 default: chunked prefill on for max_model_len > 32,768, {chunk:,} batched tokens "
                    f"({cite('v0_long_context_chunk', version)})"
                ),
            )
        if gen == "V1" and _chunked_off(d, version, gen):
            rule = lookup("chunked_off_tokens", version).value
            batched = context if rule == "max_model_len" else max(batched, context)
            tok_note = (
                f"vLLM default with chunked prefill off: {rule} ({cite('chunked_off_tokens', version)})"
            )
        f.max_batched_tokens = default(batched, tok_note)
    if f.max_sequences is None:
        cap = int(f.max_batched_tokens.value)
        if gen == "V1" and capped_seqs(version) and cap < seqs:
            seqs, note = (
                cap,
                f"vLLM default max_num_seqs capped at max_num_batched_tokens {cap:,} ({describe('seqs_capped_by_tokens', version)})",
            )
        f.max_sequences = default(seqs, note)


def _default_cache(f: Filling, version: tuple[int, ...] | None, arch: ModelArch, gpu: GpuSpec | None) -> None:
    """gpu_memory_utilization, block_size and kv_cache_dtype, when the deployment leaves them out (an MLA
    model's block size is its default attention backend's on the GPU)."""
    if f.gpu_memory_utilization is None:
        util, note = default_utilization(version)
        f.gpu_memory_utilization = default(util, note)
    if f.block_size is None and arch.mla:
        f.block_size = default(*mla_block_size(version, gpu, arch.mla_dims[0] if arch.mla_dims else None))
    if f.block_size is None:
        size = int(lookup("block_size", version).value)  # type: ignore[call-overload]
        f.block_size = default(
            size, f"vLLM default block_size {size} on CUDA ({cite('block_size', version)})"
        )
    if f.kv_cache_dtype is None:
        f.kv_cache_dtype = default("auto", "vLLM default kv_cache_dtype auto (the model's dtype)")


_EXTRA_KEYS = (
    "cpu_offload_gb",
    "limit_mm_per_prompt",
    "skip_mm_profiling",
    "mm_encoder_tp_mode",
    "num_gpu_blocks_override",
    "num_redundant_experts",
    "max_model_len_auto",
    "enable_prefix_caching",
    "mamba_cache_mode",
    "enable_lora",
    "max_loras",
    "max_lora_rank",
    "lora_adapters",
    "VLLM_USE_FLASHINFER_SAMPLER",
    "max_cudagraph_capture_size",
    "disable_custom_all_reduce",
)


def _chunked_off(d, version: tuple[int, ...] | None, gen: str) -> bool:
    """Chunked prefill stated off, and the engine honours it: V0, or V1 from 0.10.0 (0.8-0.9 V1 always chunks)."""
    off = d.chunked_prefill is not None and d.chunked_prefill.value is False
    return off and (gen == "V0" or lookup("chunked_off_tokens", version).value != "ignored")


def _hybrid_default(d, arch: ModelArch, version: tuple[int, ...] | None, gen: str) -> bool:
    """The hybrid KV cache manager when the deployment does not say: V1 from 0.9.1, except for chunked
    local attention (Llama 4) in the releases that turn it off for those models, and under a KV connector
    (--kv-transfer-config) that does not support it."""
    if gen != "V1" or lookup("hybrid_kv", version).value != "on":
        return False
    connector = d.extra.get("kv_transfer_config")
    if connector is not None and not connector_keeps_hybrid(version, connector.value):
        return False
    env = d.extra.get("VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE")
    return not arch.attention_chunk_size or chunked_local_hybrid(version, env.value if env else None)


def _engine_settings(
    f: Filling,
    arch: ModelArch,
    gpu: GpuSpec | None,
    version: tuple[int, ...] | None,
    version_text: str | None,
    gen: str,
) -> EngineSettings:
    d = f.d
    assert f.tensor_parallel and f.pipeline_parallel and f.max_context and f.max_sequences
    assert f.max_batched_tokens and f.kv_cache_dtype and f.gpu_memory_utilization and f.block_size
    stated = d.hybrid_kv_cache_manager
    hybrid = stated.value if stated else _hybrid_default(d, arch, version, gen)
    graphs_env = d.extra.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
    eager = bool(d.enforce_eager.value) if d.enforce_eager else False
    return EngineSettings(
        engine="vllm",
        version=version_text,
        generation=gen,
        tp=int(f.tensor_parallel.value),
        pp=int(f.pipeline_parallel.value),
        dp=int(d.data_parallel.value) if d.data_parallel else 1,
        expert_parallel=bool(d.expert_parallel and d.expert_parallel.value),
        max_model_len=int(f.max_context.value),
        max_num_seqs=int(f.max_sequences.value),
        max_batched_tokens=int(f.max_batched_tokens.value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=str(f.kv_cache_dtype.value),
        utilization=float(f.gpu_memory_utilization.value),
        utilization_default=default_label(f.gpu_memory_utilization, "vLLM"),
        block_size=int(f.block_size.value),
        enforce_eager=eager,
        hybrid_kv_cache_manager=bool(hybrid)
        and not (d.disable_sliding_window and d.disable_sliding_window.value),
        chunked_prefill=not _chunked_off(d, version, gen),
        kv_cache_memory_bytes=int(d.kv_cache_memory_bytes.value) if d.kv_cache_memory_bytes else None,
        subtract_cuda_graphs=subtracts_cuda_graphs(version, gpu, graphs_env.value if graphs_env else None)
        and gen == "V1",
        extra={k: v.value for k, v in d.extra.items() if k in _EXTRA_KEYS},
        in_force=f.in_force(),
    )


__all__ = ["settings"]
