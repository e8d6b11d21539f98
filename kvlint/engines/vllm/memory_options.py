"""vLLM's options (and environment variables) that change GPU memory, the KV pool, the context or concurrency,
with what kvlint does with each (memory_options.py explains the statuses). Sources are `vllm==X:path:line` in
the wheel PyPI serves for that release."""

from __future__ import annotations

from kvlint.engines.memory_entry import (
    NOT_MODELLED,
    MemoryOption,
    modelled,
    no_effect,
    not_modelled,
)
from kvlint.extract.engine_args.options import json_value

_S = "kvlint.engines.vllm.settings."
_P = "kvlint.engines.vllm.plan."
_V = "kvlint.engines.vllm.versions."
_GRAPHS = (
    "the CUDA-graph capture sizes and mode it sets change the CUDA-graph memory vLLM reserves; kvlint "
    "estimates it for the release's default capture sizes (up to 2 x max_num_seqs, or --max-cudagraph-capture-size)"
)
_LORA = "kvlint.engines.vllm.lora.note"
_LORA_SRC = "vllm/lora/layers/base_linear.py create_lora_weights"

# KV connectors that transfer from the KV-cache pool's own memory, registered in place (no GPU buffer of their own)
IN_PLACE_CONNECTORS = frozenset({"NixlConnector", "MooncakeConnector", "MoRIIOConnector"})
# compilation-config keys read into the plan (vllm.py reader: max_cudagraph_capture_size, or cudagraph_mode NONE)
COMPILATION_READ = frozenset({"cudagraph_capture_sizes", "max_cudagraph_capture_size"})
# compilation-config keys that change which CUDA graphs are captured (the rest: compiler passes, custom ops)
COMPILATION_GRAPHS = frozenset(
    {"cudagraph_mode", "full_cuda_graph", "use_cudagraph", "cudagraph_num_of_warmups"}
)


def _json(text: str):
    try:
        return json_value(text)
    except ValueError:
        return None


def _connector(text: str) -> str | None:
    """None for a connector that registers the pool in place; else which connector it is."""
    config = _json(text)
    name = config.get("kv_connector") if isinstance(config, dict) else None
    if name in IN_PLACE_CONNECTORS:
        return None
    return f" (kv_connector {name})" if name else " (a configuration kvlint cannot read)"


_TOWER = "every modality's limit is 0: models that mark their encoder as a tower (_mark_tower_model) do not load it"


def _mm_limits(text: str) -> str | None:
    """Limits of 0 for every modality stated: the encoder is not even loaded (vllm==0.33.0 interfaces.py:389-390)."""
    limits = _json(text)
    counts = (
        [v.get("count") if isinstance(v, dict) else v for v in limits.values()]
        if isinstance(limits, dict)
        else []
    )
    if counts and all(c == 0 for c in counts):
        return (
            f" ({_TOWER} (vllm==0.33.0:vllm/model_executor/models/interfaces.py:347-395, from 0.15.0; before, some "
            "models by their own check, e.g. vllm==0.14.0 qwen2_5_vl.py:1186-1197), so its weights are not on the "
            "GPU though kvlint counts them)"
        )
    return ""


def _speculative(text: str) -> str | None:
    """method ngram proposes from the prompt on the CPU (numba; vllm==0.33.0 gpu_model_runner.py:614-617): no
    draft model, only num_speculative_tokens lookahead slots per sequence: nothing kvlint leaves out worth a KV004."""
    config = _json(text)
    return None if isinstance(config, dict) and config.get("method") == "ngram" else ""


def _all2all(text: str) -> str | None:
    backend = text.strip().strip("'\"")
    return None if backend in ("allgather_reducescatter", "naive") else f" (backend {backend})"


def _compilation(text: str) -> str | None:
    """None when the configuration states no CUDA-graph setting kvlint leaves out (a bare level such as `3`,
    compiler passes, custom ops, or capture sizes / cudagraph_mode NONE, which the reader applies)."""
    config = _json(text)
    if isinstance(config, int):
        return None
    if not isinstance(config, dict):
        return None  # not JSON: the reader's KV005 says so (vllm.json_config)
    graphs = sorted(k for k in config if k in COMPILATION_GRAPHS)
    mode = str(config.get("cudagraph_mode", "")).upper()
    if not graphs or graphs == ["cudagraph_mode"] and mode == "NONE":
        return None
    return " (" + ", ".join(f"{k} {config[k]}" for k in graphs) + ")"


VLLM: dict[str, MemoryOption] = {
    # --- read onto the deployment and applied by the plan ---
    "--model": modelled("model", "kvlint.resolve._resolve_model"),
    "--tensor-parallel-size": modelled("tensor_parallel", _S + "_default_shape"),
    "--pipeline-parallel-size": modelled("pipeline_parallel", _S + "_default_shape"),
    "--data-parallel-size": modelled("data_parallel", _S + "_engine_settings"),
    "--max-model-len": modelled("max_context", _S + "_default_shape"),
    "--max-num-seqs": modelled("max_sequences", _S + "_default_batching"),
    "--max-num-batched-tokens": modelled("max_batched_tokens", _S + "_default_batching"),
    "--gpu-memory-utilization": modelled("gpu_memory_utilization", _S + "_default_cache"),
    "--dtype": modelled("dtype", _S + "_engine_settings"),
    "--quantization": modelled("quantization", _S + "_engine_settings"),
    "--kv-cache-dtype": modelled("kv_cache_dtype", _S + "_default_cache"),
    "--block-size": modelled("block_size", _S + "_default_cache"),
    "--enforce-eager": modelled("enforce_eager", _P + "cuda_graph_bytes"),
    "--enable-chunked-prefill": modelled("chunked_prefill", _S + "_chunked_off"),
    "--disable-hybrid-kv-cache-manager": modelled("hybrid_kv_cache_manager", _S + "_engine_settings"),
    "--disable-sliding-window": modelled("disable_sliding_window", _S + "_engine_settings"),
    "--kv-cache-memory-bytes": modelled("kv_cache_memory_bytes", _S + "_engine_settings"),
    "--enable-expert-parallel": modelled("expert_parallel", _S + "_engine_settings"),
    "--cpu-offload-gb": modelled("cpu_offload_gb", _P + "plan"),
    "--num-gpu-blocks-override": modelled(
        "num_gpu_blocks_override",
        _P + "override_blocks",
        "vllm==0.10.0:vllm/v1/core/kv_cache_utils.py:774-780; vllm==0.33.0:vllm/v1/core/kv_cache_planning.py:242-248",
    ),
    "--distributed-executor-backend": modelled(
        "distributed_executor_backend", "kvlint.extract.container._pods_of_launch"
    ),
    "--enable-prefix-caching": modelled(
        "enable_prefix_caching", "kvlint.engines.vllm.state._vllm_state_kind"
    ),
    "--mamba-cache-mode": modelled("mamba_cache_mode", "kvlint.engines.vllm.state._vllm_state_kind"),
    "--performance-mode": modelled("performance_mode", _S + "_default_batching"),
    "--max-cudagraph-capture-size": modelled("max_cudagraph_capture_size", _P + "cuda_graph_bytes"),
    "--max-model-len auto": modelled("max_model_len_auto", _P + "_auto_fit"),
    "--hf-overrides": modelled("model_overrides", "kvlint.resolve._apply_overrides"),
    "--rope-scaling": modelled("model_overrides", "kvlint.resolve._apply_overrides"),
    "--rope-theta": modelled("model_overrides", "kvlint.resolve._apply_overrides"),
    "VLLM_USE_V1": modelled("VLLM_USE_V1", _S + "settings"),
    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": modelled(
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", _S + "_engine_settings"
    ),
    "VLLM_USE_FLASHINFER_SAMPLER": modelled(
        "VLLM_USE_FLASHINFER_SAMPLER", "kvlint.engines.vllm.sampler.sampler_path"
    ),
    "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE": modelled(
        "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE", _S + "_hybrid_default"
    ),
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": modelled(
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "kvlint.rules.kv204_context_beyond_model.ContextBeyondModel.check"
    ),
    # --- LoRA: the plan names the adapter buffers it does not price (engines/vllm/lora.py) ---
    "--enable-lora": not_modelled(
        "LoRA buffers for max_loras adapters of max_lora_rank on every wrapped layer",
        _LORA_SRC,
        "enable_lora",
        _LORA,
    ),
    "--max-loras": not_modelled("LoRA buffers per adapter slot", _LORA_SRC, "max_loras", _LORA),
    "--max-lora-rank": not_modelled("LoRA buffer size per slot", _LORA_SRC, "max_lora_rank", _LORA),
    "--lora-modules": not_modelled(
        "enables LoRA (buffers as --enable-lora)", _LORA_SRC, "lora_adapters", _LORA
    ),
    # --- known to the option table, not read into the plan ---
    "--speculative-config": MemoryOption(
        NOT_MODELLED,
        "speculative",
        _V + "v0_long_context_chunk",  # applied: V0 does not chunk a long context's prefill with it
        changes="a draft model (EAGLE, MTP, a small LM) loads into the same worker before the profile run and its "
        "attention layers take KV-cache blocks, so the pool is smaller and each token costs more KV",
        source="vllm==0.33.0:vllm/v1/worker/gpu_model_runner.py:5012 `self.drafter.load_model(self.model)`",
        detail=_speculative,
    ),
    "--speculative-model": MemoryOption(
        NOT_MODELLED,
        "speculative",
        _V + "v0_long_context_chunk",
        changes="the draft model of older releases (before --speculative-config): its weights load beside the "
        "target's, its KV cache takes GPU blocks, and each sequence holds --num-speculative-tokens lookahead slots",
        source="vllm==0.8.0:vllm/engine/arg_utils.py:181-184, 781-799",
    ),
    "--limit-mm-per-prompt": not_modelled(
        "sets how many images/videos/audios per prompt the profile run's dummy multimodal input holds "
        "(the vision encoder's activation peak and encoder cache); kvlint's vLLM plan prices the text forward pass",
        "vllm==0.33.0:vllm/config/multimodal.py:307 limit_per_prompt",
        detail=_mm_limits,
    ),
    "--language-model-only": not_modelled(
        "every modality's limit becomes 0 (get_limit_per_prompt), so models that mark their encoder as a tower "
        "(_mark_tower_model) do not load it; kvlint counts the vision weights",
        "vllm==0.33.0:vllm/config/multimodal.py:700-701; model_executor/models/interfaces.py:347-395",
    ),
    "--kv-offloading-size": not_modelled(
        "adds a CPU KV tier of this many GiB (OffloadingConnector cpu_bytes_to_use); the GPU pool is unchanged "
        "but the pod's host memory must hold it",
        "vllm==0.33.0:vllm/config/cache.py:383; vllm/config/vllm.py:1157-1172",
    ),
    "--kv-transfer-config": MemoryOption(
        NOT_MODELLED,
        "kv_transfer_config",
        _S + "_hybrid_default",  # applied: whether the connector keeps the hybrid KV cache manager
        changes="a KV connector that may hold buffers of its own beside the KV-cache pool (kv_buffer_device, "
        "cuda by default); NIXL, Mooncake and MoRIIO register the pool's own memory instead (its effect on the "
        "hybrid KV cache manager is modelled: vllm_settings._hybrid_default)",
        source="vllm==0.33.0:vllm/config/kv_transfer.py:67; in place: kv_connector/v1/nixl/base_worker.py:806-810, "
        "mooncake/mooncake_connector.py:2264, moriio/moriio_connector.py:2484",
        detail=_connector,
    ),
    "--all2all-backend": not_modelled(
        "an expert-parallel all-to-all backend other than the default allgather/reduce-scatter allocates "
        "communication buffers on every GPU (DeepEP high-throughput: VLLM_DEEPEP_BUFFER_SIZE_MB, 1,024 MB, of "
        "NVLink buffer and as much RDMA buffer across nodes)",
        "vllm==0.33.0:vllm/config/parallel.py:220; distributed/device_communicators/all2all.py:255-274",
        detail=_all2all,
    ),
    "VLLM_ALL2ALL_BACKEND": not_modelled(
        "the all-to-all backend up to vLLM 0.14 (later releases ignore it: --all2all-backend); DeepEP and pplx "
        "allocate communication buffers on every GPU",
        "vllm==0.10.0:vllm/envs.py:130; vllm==0.14.0:vllm/config/parallel.py:530-536; gone from 0.16.0's envs.py",
        detail=_all2all,
    ),
    "--num-redundant-experts": modelled(
        "num_redundant_experts", "kvlint.capacity.weights.weights", "vllm==0.33.0:vllm/config/parallel.py:77"
    ),
    "--eplb-config": modelled(
        "num_redundant_experts", "kvlint.capacity.weights.weights", "vllm==0.33.0:vllm/config/parallel.py:77"
    ),
    "--enable-eplb": no_effect(
        "expert load balancing moves experts between GPUs; with the default 0 redundant experts each GPU holds as many",
        "vllm==0.33.0:vllm/config/parallel.py:77 num_redundant_experts default 0",
    ),
    "--compilation-config": not_modelled(
        _GRAPHS, "vllm==0.33.0:vllm/config/compilation.py:610, 651, 695", detail=_compilation
    ),
    "--cudagraph-capture-sizes": modelled(
        "max_cudagraph_capture_size", _P + "cuda_graph_bytes", "vllm==0.33.0:vllm/engine/arg_utils.py:1824"
    ),
    "--cuda-graph-sizes": modelled(
        "max_cudagraph_capture_size",
        _P + "cuda_graph_bytes",
        "vllm==0.10.2:vllm/config/__init__.py:3652-3658",
    ),
    "--optimization-level": not_modelled(
        "-O0 captures no CUDA graphs (cudagraph_mode NONE); -O1..-O3 change the capture mode",
        "vllm==0.33.0:vllm/config/vllm.py:255-269 OPTIMIZATION_LEVEL_00",
    ),
    "--max-seq-len-to-capture": no_effect(
        "used only by V0 attention backends for graph-captured decode metadata; V1 ignores it, removed in 0.11.0",
        "vllm==0.10.0:vllm/attention/backends/utils.py:339",
    ),
    "--calculate-kv-scales": no_effect(
        "only the first forward pass runs without CUDA graphs; removed by 0.28.0",
        "vllm==0.20.0:vllm/v1/worker/gpu_model_runner.py:4013-4019",
    ),
    "--swap-space": no_effect(
        "CPU swap blocks of V0's preemption (CPU memory, not GPU)",
        "vllm==0.8.0:vllm/config.py:1076-1120 `swap_space: Size of the CPU swap space per GPU`",
        "swap_space",
    ),
}
