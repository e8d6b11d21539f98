"""TGI's launcher options (and their environment forms) that change GPU memory, the KV pool, the context or
concurrency, with what kvlint does with each (memory_options.py explains the statuses). Sources are
huggingface/text-generation-inference@db931fcf42da018a3657580c64bf2720f167f9ab (v3.3.x) unless named."""

from __future__ import annotations

from kvlint.engines.memory_entry import MODELLED, MemoryOption, modelled, not_modelled

_E = "kvlint.engines.tgi.plan."
_D = "kvlint.engines.tgi.defaults."
_FCL = "server/text_generation_server/models/flash_causal_lm.py"

TGI: dict[str, MemoryOption] = {
    # --- read onto the deployment and applied by the plan ---
    "--model-id": modelled("model", "kvlint.resolve._resolve_model"),
    "--num-shard": modelled("tensor_parallel", _E + "settings"),
    "--sharded": modelled("sharded", "kvlint.engines.tgi.launcher.default_shards"),
    "--max-total-tokens": modelled("max_context", _E + "settings"),
    "--max-input-tokens": modelled("max_input_tokens", _D + "fill"),
    "--max-input-length": modelled("max_input_tokens", _D + "fill"),
    "--max-batch-prefill-tokens": modelled("max_batch_prefill_tokens", _D + "fill"),
    "--max-batch-total-tokens": modelled("max_batch_total_tokens", _E + "plan"),
    "--max-concurrent-requests": modelled("max_sequences", _E + "settings"),
    "--max-batch-size": MemoryOption(
        MODELLED,
        "max_batch_size",
        _D + "fill",
        changes="applied as v2.0-v2.4.0's max_batch_prefill_tokens default (max_batch_size x max_input_tokens); "
        "as a cap on the running batch it changes concurrency only, not the pool",
        source="launcher/src/main.rs max_batch_size",
    ),
    "--quantize": modelled("quantization", _E + "settings"),
    "--dtype": modelled("dtype", _E + "settings"),
    "--kv-cache-dtype": modelled("kv_cache_dtype", _E + "settings"),
    "--cuda-memory-fraction": modelled("cuda_memory_fraction", _E + "settings"),
    "--rope-scaling": modelled("model_overrides", "kvlint.resolve._apply_overrides"),
    "--rope-factor": modelled("model_overrides", "kvlint.resolve._apply_overrides"),
    "PREFIX_CACHING": modelled("prefix_caching", _D + "_prefix_caching"),
    "PREFILL_CHUNKING": modelled("prefill_chunking", _D + "fill"),
    "ATTENTION": modelled("attention", _D + "fill"),
    "CUDA_VISIBLE_DEVICES": modelled(
        "cuda_visible_devices",
        "kvlint.engines.tgi.launcher.default_shards",
        "launcher/src/main.rs num_cuda_devices",
    ),
    # --- known to the launcher, not read into the plan ---
    "--speculate": not_modelled(
        "each request's blocks hold `speculate` more tokens (block_tokens = prompt + max_new_tokens - 1 + "
        "speculative_length), and Medusa heads add weights (that it turns prefill chunking off is applied: "
        "tgi_defaults.prefill_chunking, models/model.py)",
        _FCL + ":342-346",
        target="speculate",
        detail=lambda text: (
            None if text.strip() == "0" else ""
        ),  # 0: no speculation (model.py `speculate != 0`)
    ),
    "--lora-adapters": not_modelled(
        "the adapters' weights load on every shard beside the model (and prefix caching is turned off for them)",
        "launcher/src/main.rs:156, 1096",
    ),
    "--cuda-graphs": not_modelled(
        "the batch sizes CUDA graphs are captured for, after the KV cache is allocated, in the memory the "
        "warm-up leaves (MEMORY_FRACTION x TGI_WIGGLE_ROOM); kvlint does not check the capture fits there",
        _FCL + ":1655-1669; server/text_generation_server/models/globals.py:48-63",
    ),
}
