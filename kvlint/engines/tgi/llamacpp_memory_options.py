"""TGI's llama.cpp backend (its router's own options): what kvlint does with each (memory_options.py explains
the statuses). The workload is a KV004 naming the KV cache llama.cpp allocates on the GPU; these options size it
(huggingface/text-generation-inference@v3.3.7 backends/llamacpp/src/main.rs, backend.rs)."""

from __future__ import annotations

from kvlint.engines.memory_entry import MemoryOption, modelled, no_effect

_L = "kvlint.engines.tgi.llamacpp."
_SRC = "huggingface/text-generation-inference@v3.3.7 backends/llamacpp/src/main.rs"

TGI_LLAMACPP: dict[str, MemoryOption] = {
    "--model-id": modelled("model", "kvlint.resolve._llamacpp_kv"),
    "--max-total-tokens": modelled("max_context", _L + "context_cells", _SRC),
    "--max-batch-total-tokens": modelled("llamacpp_n_ctx", _L + "context_cells", _SRC),
    "--max-batch-size": modelled("max_sequences", _L + "context_cells", _SRC),
    "--n-threads": modelled("llamacpp_n_threads", _L + "context_cells", _SRC),
    "--n-threads-batch": modelled("llamacpp_n_threads_batch", _L + "context_cells", _SRC),
    "--n-gpu-layers": modelled("llamacpp_n_gpu_layers", _L + "kv_settings", _SRC),
    "--type-k": modelled("llamacpp_type_k", _L + "kv_settings", _SRC),
    "--type-v": modelled("llamacpp_type_v", _L + "kv_settings", _SRC),
    "--model-gguf": modelled("llamacpp_gguf", _L + "describe", _SRC),
    "--disable-offload-kqv": modelled("llamacpp_offload_kqv", _L + "priceable", _SRC),
    "--max-input-tokens": no_effect(
        "the router's per-request input limit; llama.cpp's context (n_ctx) comes from max_batch_total_tokens, "
        "else max_batch_size x max_total_tokens",
        _SRC,
        "max_input_tokens",
    ),
}
