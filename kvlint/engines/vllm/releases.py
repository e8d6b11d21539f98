"""vLLM's defaults and accounting changes by release, read in the released wheels: one row per change, from
release `since` on, until a later row for the key. Sources are `vllm==X:path:line` in the PyPI wheel of X (python
files unzipped, vLLM not installed); "A..B" names the last release read without the change and the first with it.
Read: 0.1.7, 0.2.0, 0.2.7, 0.3.3, 0.4.3, 0.5.0-0.5.3, 0.5.5, 0.6.0-0.6.6 (+0.6.3.post1, 0.6.4.post1), 0.7.0, 0.7.3,
every X.Y.0 from 0.8.0 to 0.33.0 (the newest on PyPI, 2026-12-01), 0.8.2-0.8.5.post1, 0.9.1, 0.9.2, 0.10.1,
0.10.2, 0.14.1, 0.17.1, 0.19.1, 0.20.1, 0.20.2, 0.25.1, 0.27.1. vllm_versions.py reads the table.
"""

from __future__ import annotations

from kvlint.record import record


@record(frozen=True)
class Change:
    since: tuple[int, ...]
    key: str
    value: object
    source: str


NEWEST_RELEASE = (0, 33, 0)  # the newest release read; a later version gets the newest rows, said so

TABLE: tuple[Change, ...] = (
    # gpu_memory_utilization: the fraction of total memory per GPU the instance may use
    Change(
        (0, 1),
        "gpu_memory_utilization",
        0.9,
        "vllm==0.1.7:vllm/engine/arg_utils.py:26, vllm==0.8.0:vllm/engine/arg_utils.py:126 0.90; "
        "vllm==0.19.1:vllm/config/cache.py:41 Field(default=0.9)",
    ),
    Change(
        (0, 20, 0),
        "gpu_memory_utilization",
        0.92,
        "vllm==0.20.0:vllm/config/cache.py:66 Field(default=0.92) (0.19.1..0.20.0)",
    ),
    # the engine generation (vllm_versions.generation: VLLM_USE_V1=0 and encoder-decoder models before 0.11)
    Change((0, 1), "engine", "V0", "vllm==0.7.3:vllm/envs.py:504 VLLM_USE_V1 default '0'"),
    Change((0, 8, 0), "engine", "V1", "vllm==0.8.0:vllm/envs.py:523 VLLM_USE_V1 default '1' (0.7.3..0.8.0)"),
    Change(
        (0, 11, 0),
        "engine",
        "V1 only",
        "vllm==0.11.0:vllm/worker/ holds only worker_base.py, the V0 worker is gone (0.10.2 still has "
        "worker.py and arg_utils.py's 'Falling back to V0'; vllm PR #24907)",
    ),
    # max_num_seqs / max_num_batched_tokens when unset (OpenAI server usage context)
    Change(
        (0, 1), "batching", "v0", "vllm==0.1.7:vllm/engine/arg_utils.py:27-28 2,560 tokens, 256 sequences"
    ),
    Change(
        (0, 2, 0),
        "batching",
        "v0",
        "vllm==0.2.0:vllm/config.py:279 max(max_model_len, 2048) tokens, arg_utils.py:29 256 sequences (0.1.7..0.2.0)",
    ),
    Change(
        (0, 8, 0),
        "batching",
        "name-1024",
        "vllm==0.8.0:vllm/engine/arg_utils.py:1693-1715: 8,192 tokens when the device name has 'h100' or "
        "'h200', else 2,048; max_num_seqs 1024 on every GPU",
    ),
    Change(
        (0, 8, 4),
        "batching",
        "name",
        "vllm==0.8.4:vllm/engine/arg_utils.py:1669-1682: 'h100'/'h200' in the device name -> 1024 sequences "
        "/ 8,192 tokens, else 256 / 2,048 (0.8.3..0.8.4)",
    ),
    Change(
        (0, 8, 5),
        "batching",
        "70gib",
        "vllm==0.8.5:vllm/engine/arg_utils.py:1596-1609: >= 70 GiB -> 1024 / 8,192 (A100-80GB included), "
        "else 256 / 2,048 (0.8.4..0.8.5)",
    ),
    Change(
        (0, 9, 0),
        "batching",
        "70gib-not-a100",
        "vllm==0.9.0:vllm/engine/arg_utils.py:1495: >= 70 GiB and 'a100' not in the name -> 1024 / 8,192, "
        "else 256 / 2,048 (0.8.5.post1..0.9.0)",
    ),
    Change(
        (0, 28, 0),
        "batching",
        "160gib",
        "vllm==0.28.0:vllm/engine/arg_utils.py:2582: >= 160 GiB -> 1024 sequences / 16,384 tokens "
        "(0.27.1..0.28.0); >= 70 GiB not A100 -> 1024 / 8,192; else 256 / 2,048",
    ),
    Change(
        (0, 33, 0),
        "batching",
        "160gib-not-gb10",
        "vllm==0.33.0:vllm/engine/arg_utils.py:2963-2987: as 0.28, and GB10 (compute capability 12.1) "
        "stays on the 256 / 2,048 tier (0.32.0..0.33.0)",
    ),
    # V0: chunked prefill on by default for max_model_len > 32,768, and its default batch
    Change(
        (0, 1), "v0_long_context_chunk", 0, "vllm==0.5.2:vllm/engine/arg_utils.py: no long-context default"
    ),
    Change(
        (0, 5, 3),
        "v0_long_context_chunk",
        512,
        "vllm==0.5.3:vllm/engine/arg_utils.py:747-761 turns chunked prefill on when max_model_len > 32,768 on "
        "CUDA without a sliding window, speculative decoding, LoRA, prompt adapters or prefix caching; "
        "config.py:805 then batches 512 tokens (0.5.2..0.5.3). Prefix caching no bar from 0.6.1; Mamba "
        "layers a bar 0.5.5-0.6.2; multimodal models a bar from 0.6.2 (arg_utils.py:917); MLA from 0.8.0 "
        "(arg_utils.py:1613)",
    ),
    Change(
        (0, 6, 5),
        "v0_long_context_chunk",
        2048,
        "vllm==0.6.5:vllm/config.py:1344 max_num_batched_tokens = 2048 with chunked prefill (0.6.4.post1..0.6.5)",
    ),
    # a default max_num_seqs never exceeds max_num_batched_tokens
    Change((0, 1), "seqs_capped_by_tokens", False, "vllm==0.10.2:vllm/engine/arg_utils.py: no cap"),
    Change(
        (0, 11, 0),
        "seqs_capped_by_tokens",
        True,
        "vllm==0.11.0:vllm/engine/arg_utils.py:1678 max_num_seqs = min(default, max_num_batched_tokens) "
        "(0.10.2..0.11.0)",
    ),
    # max_num_batched_tokens when chunked prefill is stated off and the batch size is not (V1)
    Change(
        (0, 1),
        "chunked_off_tokens",
        "ignored",
        "vllm==0.9.0:vllm/engine/arg_utils.py _set_default_args_v1 'V1 always uses chunked prefills': "
        "enable_chunked_prefill = True whatever is stated",
    ),
    Change(
        (0, 10, 0),
        "chunked_off_tokens",
        "max_model_len",
        "vllm==0.10.0:vllm/engine/arg_utils.py:1556-1557 max_num_batched_tokens = max_model_len when chunked "
        "prefill is off (0.9.2..0.10.0)",
    ),
    Change(
        (0, 12, 0),
        "chunked_off_tokens",
        "max(max_model_len, default)",
        "vllm==0.12.0:vllm/engine/arg_utils.py:1993-1998 max(max_model_len, the default) (0.11.0..0.12.0)",
    ),
    # --performance-mode throughput doubles both defaults
    Change((0, 1), "performance_mode", False, "no --performance-mode before 0.17.0"),
    Change(
        (0, 17, 0),
        "performance_mode",
        True,
        "vllm==0.17.0:vllm/engine/arg_utils.py:2128-2132: 'throughput' doubles the default "
        "max_num_batched_tokens and max_num_seqs (0.16.0..0.17.0)",
    ),
    # CUDA graphs: the largest captured batch size when unset (V1; V0 does not subtract graph memory)
    Change(
        (0, 1),
        "cudagraph_sizes",
        "512",
        "vllm==0.8.0:vllm/config.py:3591 [1, 2, 4] + range(8, 513, 8); vllm==0.9.0:vllm/config.py:1972 "
        "cuda_graph_sizes [512]",
    ),
    Change(
        (0, 10, 0),
        "cudagraph_sizes",
        "2x-seqs",
        "vllm==0.10.0:vllm/config.py:2456 cuda_graph_sizes = [min(max_num_seqs * 2, 512)] (0.9.2..0.10.0); "
        "vllm==0.12.0:vllm/config/vllm.py:1038-1074 max_cudagraph_capture_size, stride 16 above 256",
    ),
    Change(
        (0, 28, 0),
        "cudagraph_sizes",
        "2x-seqs-1024-blackwell",
        "vllm==0.28.0:vllm/config/vllm.py:1938 min(2 x max_num_seqs, 1024 on compute capability 10.x "
        "else 512) (0.27.1..0.28.0)",
    ),
    # whether CUDA-graph memory is estimated at start-up and taken from the KV budget
    Change(
        (0, 1),
        "cudagraph_memory",
        "headroom",
        "graphs captured after the KV cache, out of the (1 - utilization) slack (no estimate in 0.17.1)",
    ),
    Change(
        (0, 18, 0),
        "cudagraph_memory",
        "opt-in",
        "vllm==0.18.0:vllm/envs.py:1635 VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default '0' (0.17.1..0.18.0; "
        "vllm PR #30515): estimated and logged, subtracted only when set to 1",
    ),
    Change(
        (0, 20, 0),
        "cudagraph_memory",
        "estimated",
        "vllm==0.20.0:vllm/envs.py:1724 VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default '1' (0.19.1..0.20.0; "
        "the release's own log line says 'default since v0.21.0')",
    ),
    # the estimate on AMD GPUs (ROCm)
    Change(
        (0, 1),
        "cudagraph_memory_rocm",
        False,
        "vllm==0.25.1:vllm/v1/worker/gpu_worker.py:479 the estimate only when current_platform.is_cuda(): 0 on ROCm",
    ),
    Change(
        (0, 26, 0),
        "cudagraph_memory_rocm",
        True,
        "vllm==0.26.0:vllm/v1/worker/gpu_worker.py:502 is_cuda_alike(): ROCm estimated too (vllm PR #44825; "
        "0.25.1..0.26.0)",
    ),
    # how the profile run's peak is measured (V0; V1 always uses torch's counters)
    Change(
        (0, 1),
        "profile_peak",
        "device-free",
        "vllm==0.6.3.post1:vllm/worker/worker.py:231 peak_memory = init_gpu_memory - free_gpu_memory, the "
        "caching allocator's reserved segments",
    ),
    Change(
        (0, 6, 4),
        "profile_peak",
        "torch-allocated",
        "vllm==0.6.4:vllm/worker/worker.py:201 torch.cuda.memory_stats()['allocated_bytes.all.peak'] plus "
        "non-torch memory (vllm PR #9352; 0.6.3.post1..0.6.4)",
    ),
    Change(
        (0, 27, 0),
        "profile_peak",
        "driver-consumed",
        "vllm==0.27.0:vllm/utils/mem_utils.py:317 total_consumed from mem_get_info + the transient torch peak "
        "(0.26.0..0.27.0): the same terms measured at driver level; kvlint's terms unchanged",
    ),
    # hybrid KV cache manager (sliding-window / Mamba layers sized to what they hold)
    Change(
        (0, 1),
        "hybrid_kv",
        "off",
        "V0 CacheEngine; vllm==0.9.0:vllm/v1/core/kv_cache_utils.py:660 unify_hybrid_kv_cache_specs turns "
        "sliding-window layers into full attention",
    ),
    Change(
        (0, 9, 1),
        "hybrid_kv",
        "on",
        "vllm==0.9.1:vllm/config.py:2120 disable_hybrid_kv_cache_manager = False, kv_cache_utils.py:942 "
        "unifies only when disabled (0.9.0..0.9.1)",
    ),
    # --kv-transfer-config (a KV connector: NIXL, LMCache, Mooncake ...) and the hybrid manager
    Change(
        (0, 9, 1),
        "kv_connector_hybrid",
        "off",
        "vllm==0.9.1:vllm/config.py:4501-4503 'Hybrid KV cache manager is not compatible with KV transfer': off "
        "with any --kv-transfer-config (from 0.13.0 unless --no-disable-hybrid-kv-cache-manager is stated)",
    ),
    Change(
        (0, 22, 0),
        "kv_connector_hybrid",
        "by-connector",
        "vllm==0.22.0:vllm/config/vllm.py:1442-1470 off only when the connector class is not SupportsHMA "
        "(MultiConnector: every child) (0.21.0..0.22.0); SupportsHMA in 0.22-0.33: NixlConnector (from 0.18.0), "
        "Mooncake(Store)Connector, OffloadingConnector, SimpleCPUOffloadConnector, DecodeBenchConnector, "
        "ExampleHiddenStatesConnector, MoRIIO/HiSparse from 0.30.0; never LMCacheConnectorV1",
    ),
    # chunked local attention (Llama 4) under the hybrid manager
    Change(
        (0, 1), "chunked_local_hybrid", False, "vllm==0.9.2: no ChunkedLocalAttentionSpec (full attention)"
    ),
    Change(
        (0, 10, 0),
        "chunked_local_hybrid",
        True,
        "vllm==0.10.0:vllm/v1/kv_cache_interface.py:144 ChunkedLocalAttentionSpec (0.9.2..0.10.0)",
    ),
    Change(
        (0, 11, 0),
        "chunked_local_hybrid",
        False,
        "vllm==0.11.0:vllm/envs.py:1389 VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default '0'; "
        "config/__init__.py:520-529 then disables the hybrid manager (0.10.2..0.11.0)",
    ),
    Change(
        (0, 14, 0),
        "chunked_local_hybrid",
        True,
        "vllm==0.14.0:vllm/envs.py:1468 VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default '1' "
        "(0.13.0..0.14.0)",
    ),
    # state blocks a running request holds per Mamba / linear-attention group (prefix caching of hybrids)
    Change(
        (0, 1),
        "mamba_cache_mode",
        "none",
        "prefix caching off by default for hybrid models: vllm==0.25.1:vllm/config/model.py:1883 "
        "'Hybrid models do not support prefix caching'; vllm==0.27.1:vllm/engine/arg_utils.py:2604 "
        "default_prefix_caching = supported and not is_hybrid: one state block per request",
    ),
    Change(
        (0, 28, 0),
        "mamba_cache_mode",
        "align",
        "vllm==0.28.0:vllm/engine/arg_utils.py:2650 default_prefix_caching = is_prefix_caching_supported "
        "(hybrids included; 0.27.1..0.28.0), models/config.py:604 MambaModelConfig then sets mamba_cache_mode "
        "align: two state blocks per request",
    ),
    # block size on CUDA when --block-size is unset (hybrid Mamba models: state.vllm_block_size)
    Change(
        (0, 1),
        "block_size",
        16,
        "vllm==0.8.0:vllm/platforms/cuda.py:145 block_size = 16; vllm==0.18.0:vllm/config/cache.py:34 "
        "DEFAULT_BLOCK_SIZE 16, platforms/interface.py:465 kept when the backend takes 16 (FlashAttention, "
        "FlashInfer, Triton)",
    ),
    Change(
        (0, 1), "mla_block_size", "16", "vllm==0.7.3:vllm/platforms/cuda.py: no MLA block size forced (16)"
    ),
    Change(
        (0, 8, 0),
        "mla_block_size",
        "flashmla-64",
        "vllm==0.8.0:vllm/platforms/cuda.py:158 FlashMLA forces 64 where it runs (compute capability 9.x; "
        "0.7.3..0.8.0)",
    ),
    Change(
        (0, 11, 0),
        "mla_block_size",
        "blackwell-cutlass-128",
        "vllm==0.11.0:vllm/platforms/cuda.py:170 CUTLASS MLA forces 128 on compute capability 10.0 "
        "(is_device_capability(100); 10.x from 0.13.0, is_device_capability_family) (0.10.2 only with "
        "VLLM_ATTENTION_BACKEND set; 0.10.2..0.11.0); 9.x keeps FlashMLA's 64",
    ),
    Change(
        (0, 15, 0),
        "mla_block_size",
        "blackwell-flashinfer-64",
        "vllm==0.15.0:vllm/platforms/cuda.py:223-244 FlashInfer MLA on 10.x when qk_nope_head_dim is 128 "
        "(DeepSeek-V2/V3, Kimi-K2), block 64, else CUTLASS's 128 (0.14.1..0.15.0); 9.x keeps 64",
    ),
    Change(
        (0, 18, 0),
        "mla_block_size",
        "backend-preferred",
        "vllm==0.18.0:vllm/platforms/interface.py:465 the first backend's preferred size: 9.x FLASH_ATTN_MLA "
        "MultipleOf(16) -> 16 (a 0.19.0 DeepSeek-V2-Lite log on H100 reports 1,505,552 tokens, not a "
        "multiple of 64); 10.x FLASHINFER_MLA [32, 64] -> 32 when it takes the model's qk_nope_head_dim "
        "(backends/mla/flashinfer_mla.py: 64 or 128; 192 too from vllm==0.19.0), else CUTLASS_MLA's 128 "
        "(0.17.1..0.18.0)",
    ),
    # async scheduling (no effect on memory)
    Change((0, 1), "async_scheduling", False, "vllm==0.13.0:vllm/config/scheduler.py default False"),
    Change((0, 14, 0), "async_scheduling", True, "vllm==0.14.0:vllm/config/vllm.py:588-628 on when unset"),
    # --kv-cache-memory-bytes: a fixed KV pool that skips the profile
    Change((0, 1), "kv_cache_memory_bytes", False, "vllm==0.10.1:vllm/engine/arg_utils.py: no such option"),
    Change(
        (0, 10, 2),
        "kv_cache_memory_bytes",
        True,
        "vllm==0.10.2:vllm/engine/arg_utils.py:233 (0.10.1..0.10.2)",
    ),
    # --max-model-len auto / -1: the largest context one request fits
    Change((0, 1), "max_model_len_auto", False, "vllm==0.13.0:vllm/config/model.py:167 Field(gt=0)"),
    Change(
        (0, 14, 0),
        "max_model_len_auto",
        True,
        "vllm==0.14.0:vllm/engine/arg_utils.py:2121 human_readable_int_or_auto ('auto' or -1), "
        "v1/core/kv_cache_utils.py:1508 _auto_fit_max_model_len lowers it to the largest that fits (0.13.0..0.14.0)",
    ),
    # the profile run's sampler warm-up (the path each pass takes: vllm_sampler.py)
    Change(
        (0, 1),
        "sampler_warmup",
        "one pass",
        "vllm==0.20.0:vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run: one sampler call",
    ),
    Change(
        (0, 21, 0),
        "sampler_warmup",
        "two passes",
        "vllm==0.21.0:vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run also calls the sampler with a "
        "generator, which forward_cuda sends to forward_native (v1/sample/ops/topk_topp_sampler.py:143-150); "
        "apply_top_k_top_p there runs the Triton kernel from 8 rows and PyTorch's sort under 8 (l.311-315) "
        "(0.20.2..0.21.0)",
    ),
)

__all__ = ["NEWEST_RELEASE", "TABLE", "Change"]
