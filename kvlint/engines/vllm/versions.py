"""vLLM's defaults and accounting changes by release: the functions that read the release table.

The table (data/releases.json) has one row per change, each pinned to the release that first has it and
citing the line in that release's wheel. A row applies from its `since` release on, until a later row
for the same key replaces it. A version newer than the newest release read (`newest()`) gets the
newest rows, and kvlint says so; a missing version (an image tagged `latest`, or none) is treated the
same way.
"""

from __future__ import annotations

from kvlint.catalog import tpus
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines import facts
from kvlint.engines.facts import Change
from kvlint.fileio import json_value
from kvlint.units import GIB


def rows() -> tuple[Change, ...]:
    """The release table's rows (data/releases.json, loaded on first use)."""
    return facts.changes("vllm")


def newest() -> tuple[int, ...]:
    """The newest release read; a later version gets the newest rows, said so."""
    return facts.release(facts.load("vllm", "releases")["newest_read"])


def lookup(key: str, version: tuple[int, ...] | None) -> Change:
    """The row in force for `version`; None -> the newest row."""
    return facts.in_force(rows(), key, version)


def describe(key: str, version: tuple[int, ...] | None) -> str:
    c = lookup(key, version)
    if version is None:
        return (
            f"{c.source}; no vLLM version given: v{'.'.join(map(str, newest()))}'s, the newest release read"
        )
    if version > newest():
        return f"{c.source}; v{'.'.join(map(str, version))} is newer than kvlint's table: its newest row"
    return c.source


# --- version facts used by vllm.py ---------------------------------------------------------------


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """'v0.10.1.post1' -> (0, 10, 1); None for 'latest', 'nightly' or anything unreadable."""
    if not text:
        return None
    import re

    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", str(text).strip())
    if not m:
        return None
    return tuple(int(p) for p in m.groups() if p is not None)


def generation(
    version: tuple[int, ...] | None, use_v1_env: str | None = None, encoder_decoder: bool = False
) -> str:
    """The engine row of the table: V1 the default from 0.8.0, the only engine from 0.11.0. Before 0.11
    VLLM_USE_V1=0 selects V0, and an encoder-decoder model (mllama's cross-attention) falls back to V0:
    "['MllamaForConditionalGeneration'] is not supported by the V1 Engine. Falling back to V0." (v0.9.2 log,
    https://github.com/vllm-project/vllm-ascend/issues/1963; vLLM PR #24907 removed V0 encoder-decoder
    support for 0.11)."""
    if version is not None:
        row = lookup("engine", version).value
        if row != "V1":  # "V0" before 0.8.0, "V1 only" from 0.11.0
            return "V0" if row == "V0" else "V1"
        if encoder_decoder:
            return "V0"
    return "V0" if use_v1_env == "0" else "V1"  # no version: VLLM_USE_V1=0 names a release before 0.11


def default_utilization(version: tuple[int, ...] | None) -> tuple[float, str]:
    """0.9 until 0.19.1, 0.92 from 0.20.0 (the table's gpu_memory_utilization rows)."""
    value = float(lookup("gpu_memory_utilization", version).value)  # type: ignore[arg-type]
    return (
        value,
        f"vLLM default gpu_memory_utilization {value:g} ({cite('gpu_memory_utilization', version)})",
    )


def default_batching(
    gpu: GpuSpec | None, version: tuple[int, ...] | None, gen: str, max_model_len: int
) -> tuple[int, int, str]:
    """(max_num_seqs, max_num_batched_tokens, note) as the release's EngineArgs sets them for the OpenAI
    server when both are unset (the table's batching rows). A GPU kvlint cannot size gets the small tier,
    as vLLM does when it cannot query the device."""
    if gen == "V0":
        if version is not None and version < lookup("batching", (0, 2, 0)).since:
            return 256, 2560, f"vLLM V0 defaults (256 sequences, 2,560 tokens; {cite('batching', version)})"
        return (
            256,
            max(max_model_len, 2048),
            "vLLM V0 defaults (256 sequences, max(max_model_len, 2048) tokens)",
        )
    row = lookup("batching", version)
    on_tpu = tpus.is_tpu(gpu)
    tier = "small" if on_tpu else _tier(gpu, str(row.value))
    seqs, tokens = {"largest": (1024, 16384), "large": (1024, 8192), "small": (256, 2048)}[tier]
    if row.value == "name-1024":  # 0.8.0-0.8.3: 1024 sequences on every GPU
        seqs = 1024
    rule = str(row.value)
    large = "H100/H200" if rule.startswith("name") else "GPUs of >= 70 GiB"
    large += "" if rule.startswith(("name", "70gib")) and rule != "70gib-not-a100" else " that are not A100s"
    what = (
        "TPU chips"
        if on_tpu
        else {"largest": "GPUs of >= 160 GiB", "large": large, "small": "other GPUs"}[tier]
    )
    why = f"; {ON_TPU}" if on_tpu else ""
    return (
        seqs,
        tokens,
        f"vLLM default for {what} ({seqs} sequences, {tokens:,} tokens; {cite('batching', version)}{why})",
    )


# vLLM on TPU takes the tier for devices it cannot size, whatever the chip's HBM: the platform's
# get_device_total_memory raises NotImplementedError (vllm==0.9.0:vllm/platforms/tpu.py:65-66; tpu-inference@v0.27.0
# tpu_inference/platforms/tpu_platform.py:201-202) and EngineArgs catches it as 0 bytes (vllm==0.27.0:
# vllm/engine/arg_utils.py:2533-2538). Its TPU rows (max_num_batched_tokens 1,024 / 512 / 256 for the server on
# 'V6E' / 'V5E' / 'V5P', :2565-2585; vllm==0.9.0 :1510-1540) compare those keys with get_device_name(), which
# returns "TPU V6E" (f"TPU {chip_type.name}": vllm==0.9.0 platforms/tpu.py:60-62, tpu_platform.py:169): they
# never match, so the GPU tier's 2,048 tokens hold.
ON_TPU = (
    "whatever the chip's HBM: get_device_total_memory raises on TPU (tpu-inference@v0.27.0 "
    "tpu_inference/platforms/tpu_platform.py:201-202) and the per-chip TPU rows never match its name 'TPU V6E'"
)


def cite(key: str, version: tuple[int, ...] | None) -> str:
    """describe() cut to the row's first reference (vllm==X:path:line), for notes that already say what it is."""
    full, row = describe(key, version), lookup(key, version).source
    return row.split(" ")[0].rstrip(":;,") + full[len(row) :]


def _tier(gpu: GpuSpec | None, rule: str) -> str:
    """Which default tier a GPU falls in under batching rule `rule` (the batching rows)."""
    if gpu is None or gpu.engine_bytes is None:
        return "small"
    name = f"{gpu.id} {gpu.name} {gpu.nvidia_smi_name or ''}".lower()
    if rule.startswith("name"):
        return "large" if "h100" in name or "h200" in name else "small"
    if rule.startswith("160gib") and gpu.engine_bytes >= 160 * GIB:
        return "largest"
    if gpu.engine_bytes < 70 * GIB or (rule != "70gib" and "a100" in name):
        return "small"
    return "small" if rule == "160gib-not-gb10" and gpu.cc_int == 121 else "large"


def v0_long_context_chunk(
    version: tuple[int, ...] | None, arch, max_model_len: int, extra: dict, stated_chunked: bool | None
) -> int:
    """V0 (0.5.3 on): the batch of the chunked prefill vLLM turns on for max_model_len > 32,768 when
    --enable-chunked-prefill is unset, 0 when it does not (the v0_long_context_chunk row lists the bars)."""
    chunk = int(lookup("v0_long_context_chunk", version).value)  # type: ignore[call-overload]
    if not chunk or stated_chunked is not None or max_model_len <= 32768 or version is None:
        return 0
    bars = (
        bool(arch.sliding_window),
        bool(extra.get("enable_lora")),
        bool(
            extra.get("speculative")
        ),  # use_spec_decode (0.5.3 arg_utils.py:755, 0.8.0 :1623, 0.10.0 speculative_config)
        bool(extra.get("enable_prefix_caching")) and version < (0, 6, 1),
        bool(arch.state_layers) and (0, 5, 5) <= version < (0, 6, 3),
        bool(arch.vision_params) and version >= (0, 6, 2),
        bool(arch.mla) and version >= (0, 8),
    )
    return 0 if any(bars) else chunk


def logs_concurrency_tokens(generation: str, version_text: str | None) -> bool:
    """From 0.20.1 V1's start-up line "GPU KV cache size: N tokens" is max_concurrency x max_model_len;
    before, num_blocks // KV-cache groups x block size (the table's kv_tokens_logged rows). The two differ
    most for hybrid models, whose blocks the attention and state groups share."""
    version = parse_version(version_text)
    return generation == "V1" and lookup("kv_tokens_logged", version).value == "concurrency"


def capped_seqs(version: tuple[int, ...] | None) -> bool:
    """From 0.11.0 a default max_num_seqs is at most max_num_batched_tokens (stated or default)."""
    return bool(lookup("seqs_capped_by_tokens", version).value)


def throughput_mode(version: tuple[int, ...] | None, mode: object) -> bool:
    """--performance-mode throughput (0.17.0 on) doubles the default max_num_seqs and max_num_batched_tokens."""
    return bool(lookup("performance_mode", version).value) and str(mode or "").lower() == "throughput"


def capture_limit(
    version: tuple[int, ...] | None, gpu: GpuSpec | None, max_num_seqs: int, stated: object = None
) -> int:
    """The largest CUDA-graph batch size V1 captures: --max-cudagraph-capture-size as stated, else the
    release's default (the cudagraph_sizes rows)."""
    if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0:
        return stated
    rule = str(lookup("cudagraph_sizes", version).value)
    if rule == "512":
        return 512
    ceiling = 1024 if rule.endswith("blackwell") and _blackwell(gpu) else 512
    return min(2 * max_num_seqs, ceiling)


def _blackwell(gpu: GpuSpec | None) -> bool:
    """Compute capability 10.x (B200, B300, GB200): vLLM's is_device_capability_family(100)."""
    return bool(gpu and gpu.vendor == "nvidia" and gpu.compute_capability and gpu.compute_capability[0] == 10)


def mla_block_size(
    version: tuple[int, ...] | None, gpu: GpuSpec | None, qk_nope: int | None = None
) -> tuple[int, str]:
    """The KV block size an MLA model gets when --block-size is unset: the attention backend vLLM picks
    by default on the GPU's compute capability (and, on 10.x, the model's qk_nope_head_dim, which FlashInfer's
    MLA kernel restricts), and the block size that backend takes (mla_block_size rows)."""
    rule = str(lookup("mla_block_size", version).value)
    major = gpu.compute_capability[0] if gpu and gpu.vendor == "nvidia" and gpu.compute_capability else None
    nope_ok = qk_nope is None or qk_nope in ((128,) if rule != "backend-preferred" else (64, 128, 192))
    if rule == "backend-preferred" and version is not None and version < (0, 19) and qk_nope == 192:
        nope_ok = False  # FlashInfer MLA took 64 / 128 until 0.19.0 added 192
    size = 16
    if rule == "backend-preferred":
        size = (32 if nope_ok else 128) if major == 10 else 16
    elif major == 9 and rule != "16":
        size = 64
    elif major == 10 and rule == "blackwell-cutlass-128":
        exact = version is not None and version < (0, 13)  # 0.11-0.12: is_device_capability(100), 10.0 only
        size = 16 if exact and gpu and gpu.compute_capability != (10, 0) else 128
    elif major == 10 and rule == "blackwell-flashinfer-64":
        size = 64 if nope_ok else 128
    return size, f"vLLM default block_size {size} for MLA on this GPU ({cite('mla_block_size', version)})"


def unknown_version_note(version_text: str | None) -> str | None:
    """What the plan says when the deployment gives no vLLM version (no image tag, `latest`, `nightly`)."""
    if parse_version(version_text) is not None:
        return None
    newest_read = ".".join(map(str, newest()))
    return (
        f"vLLM version {'unknown' if not version_text else repr(version_text) + ' unreadable'}: kvlint applies "
        f"the behaviour of the newest release it read, v{newest_read} (V1 engine, default utilization "
        f"{default_utilization(None)[0]:g}, CUDA-graph memory subtracted as from v0.20.0, hybrid KV cache "
        "manager, prefix caching on for hybrid models as from v0.28.0); an older release can differ by several "
        "GiB, pin the image tag"
    )


def reserved_peak(version: tuple[int, ...] | None) -> bool:
    """V0 before v0.6.4 took the profile peak from free device memory: the allocator's reserved segments
    (version table key profile_peak; the arithmetic in vllm_v0.py)."""
    return lookup("profile_peak", version).value == "device-free"


def subtracts_cuda_graphs(
    version: tuple[int, ...] | None, gpu: GpuSpec | None = None, env: object = None
) -> bool:
    """Whether the CUDA-graph estimate comes out of the KV budget: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    (from 0.18.0; default 1 from 0.20.0) as stated, else the release's default; on AMD GPUs vLLM estimates
    nothing before 0.26.0 (the cudagraph_memory and cudagraph_memory_rocm rows)."""
    rule = lookup("cudagraph_memory", version).value
    if rule == "headroom":
        return False
    if gpu is not None and gpu.vendor == "amd" and not lookup("cudagraph_memory_rocm", version).value:
        return False
    if env is not None and str(env).strip() in ("0", "1"):
        return str(env).strip() == "1"
    return rule == "estimated"


def auto_fits_context(version: tuple[int, ...] | None) -> bool:
    """--max-model-len auto (or -1) from 0.14.0: max_model_len becomes the largest one request fits."""
    return bool(lookup("max_model_len_auto", version).value)


_HMA_CONNECTORS = {  # SupportsHMA subclasses by release (the kv_connector_hybrid row)
    "NixlConnector": (0, 18, 0),
    "MooncakeConnector": (0, 22, 0),
    "MooncakeStoreConnector": (0, 22, 0),
    "OffloadingConnector": (0, 22, 0),
    "SimpleCPUOffloadConnector": (0, 22, 0),
    "DecodeBenchConnector": (0, 22, 0),
    "ExampleHiddenStatesConnector": (0, 22, 0),
    "MoRIIOConnector": (0, 30, 0),
    "HiSparseConnector": (0, 30, 0),
}


def connector_keeps_hybrid(version: tuple[int, ...] | None, config: object) -> bool:
    """Whether the hybrid manager survives --kv-transfer-config `config` (its JSON text): never before 0.22.0,
    then when the connector (every child of a MultiConnector) is SupportsHMA in that release."""
    if lookup("kv_connector_hybrid", version).value == "off":
        return False

    try:
        parsed = json_value(str(config))
    except ValueError:
        return False
    if not isinstance(parsed, dict):
        return False
    extra = parsed.get("kv_connector_extra_config")
    children = extra.get("connectors") if isinstance(extra, dict) else None
    if parsed.get("kv_connector") == "MultiConnector" and isinstance(children, list) and children:
        names = [c.get("kv_connector") if isinstance(c, dict) else None for c in children]
    else:
        names = [parsed.get("kv_connector")]
    since = [_HMA_CONNECTORS.get(str(n)) for n in names]
    return all(v is not None and (version is None or version >= v) for v in since)


def chunked_local_hybrid(version: tuple[int, ...] | None, env: object = None) -> bool:
    """Whether chunked local attention (Llama 4) runs under the hybrid manager: from 0.10.0, off by default
    0.11.0-0.13.x and on again from 0.14.0 (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE, read when stated);
    when it does not, vLLM turns the hybrid manager off for the whole model."""
    if version is not None and version < lookup("chunked_local_hybrid", (0, 10, 0)).since:
        return False
    if env is not None and str(env).strip() in ("0", "1"):
        return str(env).strip() == "1"
    return bool(lookup("chunked_local_hybrid", version).value)


__all__ = [
    "Change",
    "auto_fits_context",
    "capped_seqs",
    "capture_limit",
    "chunked_local_hybrid",
    "connector_keeps_hybrid",
    "default_batching",
    "default_utilization",
    "cite",
    "describe",
    "generation",
    "lookup",
    "mla_block_size",
    "newest",
    "parse_version",
    "reserved_peak",
    "rows",
    "subtracts_cuda_graphs",
    "throughput_mode",
    "unknown_version_note",
    "v0_long_context_chunk",
]
