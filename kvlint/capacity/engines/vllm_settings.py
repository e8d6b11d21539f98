"""vLLM's settings: what the deployment states, completed with vLLM's defaults by release
(vllm_versions.py reads the release table); every default applied is written back on the deployment, named."""

from __future__ import annotations

from kvlint.capacity.engines.vllm_versions import (
    default_batching,
    default_utilization,
    generation,
    parse_version,
    subtracts_cuda_graphs,
)
from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec


def settings(d, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """EngineSettings for vLLM; every default applied is written back on the deployment, named."""
    version = parse_version(version_text)
    use_v1 = d.extra.get("VLLM_USE_V1")
    gen = generation(version, str(use_v1.value) if use_v1 else None, encoder_decoder=arch.cross_layers > 0)
    vname = f"vLLM {version_text}" if version_text else "vLLM"
    _default_shape(d, arch, vname)
    _default_batching(d, gpu, version, gen)
    _default_cache(d, version)
    return _engine_settings(d, version, version_text, gen)


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


def _default_batching(d, gpu: GpuSpec | None, version: tuple[int, ...] | None, gen: str) -> None:
    """max_num_seqs and max_num_batched_tokens, when the deployment leaves them out."""
    from kvlint.deployment import default

    seqs, batched, note = default_batching(gpu, version, gen, int(d.max_context.value))
    if d.max_sequences is None:
        d.max_sequences = default(seqs, note)
    if d.max_batched_tokens is None:
        chunked_off = d.chunked_prefill is not None and d.chunked_prefill.value is False
        if chunked_off and gen == "V1":
            batched = max(batched, int(d.max_context.value))
            note = "vLLM default with chunked prefill off: max(max_model_len, default)"
        d.max_batched_tokens = default(batched, note)


def _default_cache(d, version: tuple[int, ...] | None) -> None:
    """gpu_memory_utilization, block_size and kv_cache_dtype, when the deployment leaves them out."""
    from kvlint.deployment import default

    if d.gpu_memory_utilization is None:
        util, note = default_utilization(version)
        d.gpu_memory_utilization = default(util, note)
    if d.block_size is None:
        d.block_size = default(16, "vLLM default block_size 16 on CUDA")
    if d.kv_cache_dtype is None:
        d.kv_cache_dtype = default("auto", "vLLM default kv_cache_dtype auto (the model's dtype)")


_EXTRA_KEYS = (
    "cpu_offload_gb",
    "max_model_len_auto",
    "enable_prefix_caching",
    "mamba_cache_mode",
    "enable_lora",
    "max_loras",
    "max_lora_rank",
    "lora_adapters",
    "VLLM_USE_FLASHINFER_SAMPLER",
)


def _engine_settings(
    d, version: tuple[int, ...] | None, version_text: str | None, gen: str
) -> EngineSettings:
    hybrid = d.hybrid_kv_cache_manager.value if d.hybrid_kv_cache_manager else gen == "V1"
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
        block_size=int(d.block_size.value),
        enforce_eager=eager,
        hybrid_kv_cache_manager=bool(hybrid)
        and not (d.disable_sliding_window and d.disable_sliding_window.value),
        chunked_prefill=not (d.chunked_prefill is not None and d.chunked_prefill.value is False),
        kv_cache_memory_bytes=int(d.kv_cache_memory_bytes.value) if d.kv_cache_memory_bytes else None,
        subtract_cuda_graphs=subtracts_cuda_graphs(version) and gen == "V1",
        extra={k: v.value for k, v in d.extra.items() if k in _EXTRA_KEYS},
    )


__all__ = ["settings"]
