"""vLLM's settings: what the deployment states, completed with vLLM's defaults by release
(vllm_versions.py reads the release table); every default applied is written back on the deployment, named."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, default_label
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.base import SettingRefused
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
    """EngineSettings for vLLM; every default applied is written back on the deployment, named."""
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
    _default_shape(d, arch, vname)
    _default_batching(d, gpu, version, gen, arch)
    _default_cache(d, version, arch, gpu)
    return _engine_settings(d, arch, gpu, version, version_text, gen)


def _default_shape(d, arch: ModelArch, vname: str) -> None:
    """Parallelism and max_model_len, when the deployment leaves them out."""
    from kvlint.deployment import default

    if d.tensor_parallel is None:
        d.tensor_parallel = default(1, f"{vname} default tensor_parallel_size 1")
    if d.pipeline_parallel is None:
        d.pipeline_parallel = default(1, f"{vname} default pipeline_parallel_size 1")
    if d.max_context is None:
        d.max_context = default(
            arch.max_positions, f"max_model_len derived from the model config ({arch.max_positions_note})"
        )


def _default_batching(
    d, gpu: GpuSpec | None, version: tuple[int, ...] | None, gen: str, arch: ModelArch
) -> None:
    """max_num_seqs and max_num_batched_tokens, when the deployment leaves them out."""
    from kvlint.deployment import default

    seqs, batched, note = default_batching(gpu, version, gen, int(d.max_context.value))
    stated_chunked = None if d.chunked_prefill is None else bool(d.chunked_prefill.value)
    extra = {k: v.value for k, v in d.extra.items()}
    chunk = (
        v0_long_context_chunk(version, arch, int(d.max_context.value), extra, stated_chunked)
        if gen == "V0"
        else 0
    )
    mode = d.extra.get("performance_mode")
    if gen == "V1" and mode is not None and throughput_mode(version, mode.value):
        seqs, batched = 2 * seqs, 2 * batched
        note += f"; doubled by --performance-mode throughput ({describe('performance_mode', version)})"
    if d.max_batched_tokens is None:
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
            batched = (
                int(d.max_context.value)
                if rule == "max_model_len"
                else max(batched, int(d.max_context.value))
            )
            tok_note = (
                f"vLLM default with chunked prefill off: {rule} ({cite('chunked_off_tokens', version)})"
            )
        d.max_batched_tokens = default(batched, tok_note)
    if d.max_sequences is None:
        cap = int(d.max_batched_tokens.value)
        if gen == "V1" and capped_seqs(version) and cap < seqs:
            seqs, note = (
                cap,
                f"vLLM default max_num_seqs capped at max_num_batched_tokens {cap:,} ({describe('seqs_capped_by_tokens', version)})",
            )
        d.max_sequences = default(seqs, note)


def _default_cache(d, version: tuple[int, ...] | None, arch: ModelArch, gpu: GpuSpec | None) -> None:
    """gpu_memory_utilization, block_size and kv_cache_dtype, when the deployment leaves them out (an MLA
    model's block size is its default attention backend's on the GPU)."""
    from kvlint.deployment import default

    if d.gpu_memory_utilization is None:
        util, note = default_utilization(version)
        d.gpu_memory_utilization = default(util, note)
    if d.block_size is None and arch.mla:
        d.block_size = default(*mla_block_size(version, gpu, arch.mla_dims[0] if arch.mla_dims else None))
    if d.block_size is None:
        size = int(lookup("block_size", version).value)  # type: ignore[call-overload]
        d.block_size = default(
            size, f"vLLM default block_size {size} on CUDA ({cite('block_size', version)})"
        )
    if d.kv_cache_dtype is None:
        d.kv_cache_dtype = default("auto", "vLLM default kv_cache_dtype auto (the model's dtype)")


_EXTRA_KEYS = (
    "cpu_offload_gb",
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
    d,
    arch: ModelArch,
    gpu: GpuSpec | None,
    version: tuple[int, ...] | None,
    version_text: str | None,
    gen: str,
) -> EngineSettings:
    stated = d.hybrid_kv_cache_manager
    hybrid = stated.value if stated else _hybrid_default(d, arch, version, gen)
    graphs_env = d.extra.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
    eager = bool(d.enforce_eager.value) if d.enforce_eager else False
    return EngineSettings(
        engine="vllm",
        version=version_text,
        generation=gen,
        tp=int(d.tensor_parallel.value),
        pp=int(d.pipeline_parallel.value),
        dp=int(d.data_parallel.value) if d.data_parallel else 1,
        expert_parallel=bool(d.expert_parallel and d.expert_parallel.value),
        max_model_len=int(d.max_context.value),
        max_num_seqs=int(d.max_sequences.value),
        max_batched_tokens=int(d.max_batched_tokens.value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=str(d.kv_cache_dtype.value),
        utilization=float(d.gpu_memory_utilization.value),
        utilization_default=default_label(d.gpu_memory_utilization, "vLLM"),
        block_size=int(d.block_size.value),
        enforce_eager=eager,
        hybrid_kv_cache_manager=bool(hybrid)
        and not (d.disable_sliding_window and d.disable_sliding_window.value),
        chunked_prefill=not _chunked_off(d, version, gen),
        kv_cache_memory_bytes=int(d.kv_cache_memory_bytes.value) if d.kv_cache_memory_bytes else None,
        subtract_cuda_graphs=subtracts_cuda_graphs(version, gpu, graphs_env.value if graphs_env else None)
        and gen == "V1",
        extra={k: v.value for k, v in d.extra.items() if k in _EXTRA_KEYS},
    )


__all__ = ["settings"]
