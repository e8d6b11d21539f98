"""SGLang's options that change GPU memory, the KV pool, the context or concurrency, with what kvlint does
with each (memory_options.py explains the statuses). Sources are `sglang==X:path:line` in the wheel PyPI serves."""

from __future__ import annotations

from kvlint.engines.memory_entry import MemoryOption, modelled, no_effect, not_modelled

_E = "kvlint.engines.sglang.plan."
_S = "kvlint.engines.sglang.settings."
_STATE = "kvlint.engines.sglang.state.sglang_state"
_F = "sglang==0.5.23:sglang/srt/arg_groups/fields/"
_LORA = "kvlint.engines.sglang.lora.note"
_LORA_SRC = "docs.sglang.io/advanced_features/lora.html (--max-loras-per-batch)"
_DRAFT = (
    "the draft model's weights, its KV pool and CUDA graphs come out of the memory mem_fraction_static leaves"
)

SGLANG: dict[str, MemoryOption] = {
    # --- read onto the deployment and applied by the plan ---
    "--model-path": modelled("model", "kvlint.resolve._resolve_model"),
    "--tp-size": modelled("tensor_parallel", _S + "settings"),
    "--pp-size": modelled("pipeline_parallel", _S + "settings"),
    "--dp-size": modelled("data_parallel", _S + "settings"),
    "--context-length": modelled("max_context", _S + "settings"),
    "--max-running-requests": modelled("max_sequences", _S + "settings"),
    "--mem-fraction-static": modelled("mem_fraction_static", _S + "settings"),
    "--max-total-tokens": modelled(
        "max_total_tokens",
        _E + "plan",
        "sglang==0.5.11:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:675-684 min(token_capacity, max_total_tokens)",
    ),
    "--chunked-prefill-size": modelled("chunked_prefill_size", _S + "settings"),
    "--kv-cache-dtype": modelled("kv_cache_dtype", _S + "settings"),
    "--quantization": modelled("quantization", _S + "settings"),
    "--dtype": modelled("dtype", _S + "settings"),
    "--page-size": modelled("block_size", _S + "settings"),
    "--nnodes": modelled("nnodes", "kvlint.extract.container._pods_of_launch"),
    "--enable-dp-attention": modelled("enable_dp_attention", _E + "_max_running"),
    "--speculative-algorithm": modelled("speculative_algorithm", _S + "_picked"),
    "--speculative-num-draft-tokens": modelled("speculative_num_draft_tokens", _STATE),
    "--cuda-graph-max-bs": modelled("cuda_graph_max_bs", _S + "_picked"),
    "--cuda-graph-max-bs-decode": modelled("cuda_graph_max_bs", _S + "_picked"),
    "--disable-cuda-graph": modelled("disable_cuda_graph", _S + "settings"),
    "--enable-piecewise-cuda-graph": modelled("enable_piecewise_cuda_graph", _S + "_piecewise"),
    "--enforce-piecewise-cuda-graph": modelled("enable_piecewise_cuda_graph", _S + "_piecewise"),
    "--enable-breakable-cuda-graph": modelled("enable_piecewise_cuda_graph", _S + "_piecewise"),
    "--disable-piecewise-cuda-graph": modelled("disable_piecewise_cuda_graph", _S + "_piecewise"),
    "--disable-prefill-cuda-graph": modelled("disable_piecewise_cuda_graph", _S + "_piecewise"),
    "--cuda-graph-backend-prefill": modelled("cuda_graph_backend_prefill", _S + "_piecewise"),
    "--piecewise-cuda-graph-max-tokens": modelled("piecewise_cuda_graph_max_tokens", _S + "_picked"),
    "--cuda-graph-max-bs-prefill": modelled("piecewise_cuda_graph_max_tokens", _S + "_picked"),
    "--disable-decode-cuda-graph": modelled("disable_decode_cuda_graph", _S + "_decode_graph"),
    "--cuda-graph-backend-decode": modelled("cuda_graph_backend_decode", _S + "_decode_graph"),
    "--disable-hybrid-swa-memory": modelled("disable_hybrid_swa_memory", _S + "settings"),
    "--attention-backend": modelled("attention_backend", _S + "_page_size"),
    "--max-mamba-cache-size": modelled("max_mamba_cache_size", _STATE),
    "--mamba-full-memory-ratio": modelled("mamba_full_memory_ratio", _STATE),
    "--disable-radix-cache": modelled("disable_radix_cache", _STATE),
    "--json-model-override-args": modelled("model_overrides", "kvlint.resolve._apply_overrides"),
    "--max-prefill-tokens": no_effect(
        "the scheduler's token limit for one prefill batch; SGLang sizes the pool before it applies",
        _F + "schedule.py:71",
        "max_prefill_tokens",
    ),
    # --- LoRA: the plan names the adapter buffers it does not price (engines/sglang/lora.py) ---
    "--enable-lora": not_modelled("LoRA adapter buffers", _LORA_SRC, "enable_lora", _LORA),
    "--max-loras-per-batch": not_modelled(
        "LoRA adapter buffers per batch", _LORA_SRC, "max_loras_per_batch", _LORA
    ),
    "--max-lora-rank": not_modelled("LoRA adapter buffer size", _LORA_SRC, "max_lora_rank", _LORA),
    "--lora-paths": not_modelled(
        "enables LoRA (buffers as --enable-lora)", _LORA_SRC, "lora_adapters", _LORA
    ),
    # --- speculative decoding: the plan's note says where the draft's memory comes from (sglang.plan) ---
    "--speculative-draft-model-path": not_modelled(_DRAFT, _F + "spec.py:36", said_by=_E + "plan"),
    "--speculative-num-steps": not_modelled(_DRAFT, _F + "spec.py", said_by=_E + "plan"),
    "--speculative-eagle-topk": not_modelled(_DRAFT, _F + "spec.py", said_by=_E + "plan"),
    # --- known to the option table, not read into the plan ---
    "--enable-hierarchical-cache": not_modelled(
        "adds a host-memory KV tier of --hicache-ratio (default 2.0) x the GPU pool, or --hicache-size GB; "
        "the GPU pool is unchanged but the pod's host memory must hold it",
        _F + "memory.py:98-117",
    ),
    "--ep-num-redundant-experts": modelled(
        "num_redundant_experts", "kvlint.capacity.weights.weights", _F + "exec_.py:914"
    ),
    "--moe-a2a-backend": not_modelled(
        "an all-to-all backend (DeepEP, Mooncake, NIXL, MORI ...) allocates communication buffers on every GPU",
        _F + "exec_.py:836",
        detail=lambda text: None if text.strip() == "none" else f" (backend {text.strip()})",
    ),
    "--enable-deepep-moe": not_modelled(
        "DeepEP all-to-all (the older spelling of --moe-a2a-backend deepep) allocates communication buffers on "
        "every GPU",
        "sgl-project/sglang@0154e6f82d171ac2081b6d5d11df28fb759747f9:docs/backend/server_arguments.md enable_deepep_moe",
    ),
    "--moe-dense-tp-size": not_modelled(
        "the dense MLP layers of a MoE model shard over this TP size instead of --tp-size: more dense weights per GPU",
        _F + "parallel.py:289",
    ),
    "--cpu-offload-gb": modelled(
        "cpu_offload_gb",
        _E + "plan",
        "sglang==0.5.23:sglang/srt/utils/offloader.py:69-71 (cpu_offload_gb * 1024**3)",
    ),
    "--cuda-graph-bs": not_modelled(
        "the batch sizes captured; SGLang sets cuda_graph_max_bs = max(cuda_graph_bs), which the default "
        "mem_fraction_static's reserve counts (reserved_mem += cuda_graph_max_bs x 2 MB); kvlint takes "
        "cuda_graph_max_bs from --cuda-graph-max-bs or the GPU's default",
        "sglang==0.5.5:sglang/srt/server_args.py:774-778, 794",
    ),
    "--cuda-graph-bs-decode": not_modelled(
        "the decode batch sizes captured (v0.5.14 on); kvlint takes the largest from --cuda-graph-max-bs(-decode) "
        "or the GPU's default",
        _F + "exec_.py:640; sglang/srt/arg_groups/cuda_graph_hook.py:78-79",
    ),
    "--enable-eplb": no_effect(
        "rebalances experts between ranks; without --ep-num-redundant-experts (default 0) each rank holds as many",
        "sglang==0.5.5:sglang/srt/server_args.py:399-402",
    ),
    "--ep-size": no_effect(
        "each GPU holds experts / ep_size experts, each sharded over tp_size / ep_size: the expert bytes per GPU "
        "of TP alone",
        _F + "parallel.py:281-339 (moe_ep_size, moe_tp_size = tp_size // ep_size)",
    ),
}
