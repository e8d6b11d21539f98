"""TensorRT-LLM's settings in force: what the launch states, trtllm-serve's defaults for the rest
(data/releases.json); fit.py makes the plan from them and says where each accounting term is read."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, default_label
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.catalog.name_rules import FROM_NAME
from kvlint.deployment import Deployment, Value, default
from kvlint.engines import native
from kvlint.engines.base import SettingRefused
from kvlint.engines.filling import Filling
from kvlint.engines.trtllm.releases import default as release_default

BACKENDS = ("pytorch", "trt", "tensorrt")
# weight formats whose quantization config can also quantize the KV cache (ModelOpt FP8 / NVFP4
# hf_quant_config `kv_cache_quant_algo`, compressed-tensors `kv_cache_scheme`)
NAME_KV_CAPABLE = ("fp8", "nvfp4", "compressed-tensors")
# KV cache dtypes kv_cache_config.dtype takes (tensorrt_llm/llmapi/llm_args.py KvCacheConfig.dtype: "auto",
# "fp8", "nvfp4"); kvlint's own spellings of an 8-bit cache (fp8_e4m3, fp8_e5m2) are read as fp8
KV_DTYPES = ("auto", "fp8", "nvfp4", "bfloat16", "float16")


def checkpoint_kv_unread(arch: ModelArch) -> bool:
    """A quantized checkpoint kvlint priced from its name only, so the KV cache quantization its own
    quantization config states is unknown. With kv_cache_dtype "auto" TensorRT-LLM takes that config's
    (tensorrt_llm/_torch/pyexecutor/model_engine.py validate_and_set_kv_cache_quant: "KV cache quantization
    set to auto. Using checkpoint KV quantization."; _torch/model_config.py reads hf_quant_config.json
    `kv_cache_quant_algo`; _torch/pyexecutor/_util.py get_cache_size_per_token: 1 byte when
    `has_fp8_kv_cache()`), so an FP8 cache there holds twice the tokens kvlint counts."""
    q = arch.quant
    return (
        q is not None
        and not q.kv_cache_dtype
        and q.scheme.endswith(FROM_NAME)
        and q.method in NAME_KV_CAPABLE
    )


def _filled(f: Filling, name: str, key: str, version: str | None, flag: str) -> Value:
    """A Deployment field the file states, or trtllm-serve's default for the release (named with its source)."""
    said = getattr(f, name)
    if said is not None:
        return said
    row = release_default(key, version)
    v = default(row.value, f"TensorRT-LLM default {flag} {row.value}")  # row.source: data/releases.json
    setattr(f, name, v)
    return v


def _int(f: Filling, key: str, fallback: int) -> int:
    v = f.options.get(key)
    return int(v.value) if v is not None and isinstance(v.value, int) and v.value > 0 else fallback


def settings(d: Deployment, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None) -> EngineSettings:
    """EngineSettings for trtllm-serve (and Dynamo's worker, which passes the same LLM-API arguments)."""
    f = Filling.of(d)
    native.carry(f, "trtllm")
    backend = f.options.get("backend")
    if backend is None:
        row = release_default("backend", version_text)
        backend = f.options["backend"] = default(row.value, f"TensorRT-LLM default --backend {row.value}")
    if str(backend.value).lower() not in BACKENDS:
        raise SettingRefused(
            f"TensorRT-LLM: --backend {backend.value!r} is not one trtllm-serve knows (pytorch, trt, _autodeploy):"
            ' launch_server raises click.BadParameter ("is not a known backend")',
            backend.where,
        )
    if f.tensor_parallel is None:
        f.tensor_parallel = default(1, "TensorRT-LLM default --tp_size 1 (tensorrt_llm/commands/serve.py)")
    if f.pipeline_parallel is None:
        f.pipeline_parallel = default(1, "TensorRT-LLM default --pp_size 1 (tensorrt_llm/commands/serve.py)")
    if f.max_context is None:
        # tensorrt_llm/_torch/pyexecutor/py_executor_creator.py: "max_seq_len is not specified, using inferred value"
        f.max_context = default(
            arch.max_positions,
            "TensorRT-LLM default: the model's max_position_embeddings",
        )
    batch = _filled(f, "max_sequences", "max_batch_size", version_text, "--max_batch_size")
    tokens = _filled(f, "max_batched_tokens", "max_num_tokens", version_text, "--max_num_tokens")
    fraction = _filled(
        f,
        "gpu_memory_utilization",
        "free_gpu_memory_fraction",
        version_text,
        "--kv_cache_free_gpu_memory_fraction",
    )
    block = _filled(f, "block_size", "tokens_per_block", version_text, "kv_cache_config.tokens_per_block")
    if not 0 < float(fraction.value) < 1:
        raise SettingRefused(
            f"TensorRT-LLM: free_gpu_memory_fraction {fraction.value} must be below 1.0 and above 0"
            ' (resource_manager.py calculate_max_num_blocks: "Invalid freeMemFraction, freeMemFraction ... must be'
            ' smaller than 1.0")',
            fraction.where,
        )
    kv = str(f.kv_cache_dtype.value).lower() if f.kv_cache_dtype is not None else "auto"
    kv_unread = kv == "auto" and checkpoint_kv_unread(arch)
    if kv == "auto" and arch.quant is not None and arch.quant.kv_cache_dtype:
        kv = str(
            arch.quant.kv_cache_dtype
        ).lower()  # "KV cache quantization set to auto. Using checkpoint KV quantization."
    tp, pp = int(f.tensor_parallel.value), int(f.pipeline_parallel.value)
    ep = _int(f, "moe_expert_parallel_size", 0)
    extra = {k: v.value for k, v in f.options.items()}
    extra.update(
        backend=str(backend.value).lower(),
        beam=_int(f, "max_beam_width", 1),
        ep=ep,
        attention_dp=bool(f.option("enable_attention_dp")),
        kv_unread=kv_unread,
    )
    return EngineSettings(
        engine="trtllm",
        version=version_text,
        generation="-",
        tp=tp,
        pp=pp,
        dp=1,
        max_model_len=int(f.max_context.value),
        max_num_seqs=int(batch.value),
        max_batched_tokens=int(tokens.value),
        dtype=str(d.dtype.value) if d.dtype else None,
        quantization=str(d.quantization.value) if d.quantization else None,
        kv_cache_dtype=kv,
        utilization=float(fraction.value),
        utilization_default=default_label(fraction, "TensorRT-LLM"),
        block_size=int(block.value),
        enforce_eager=False,
        hybrid_kv_cache_manager=False,
        chunked_prefill=bool(f.option("enable_chunked_prefill")),
        expert_parallel=ep > 1,
        extra=extra,
        in_force=f.in_force(),
    )


__all__ = ["settings"]
