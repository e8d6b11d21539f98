"""vLLM's defaults and accounting changes by release: one table, each row with its source.

A row applies from its `since` release on, until a later row for the same key replaces it. A
version newer than every row gets the newest row, and kvlint says so; a missing version (an image
tagged `latest`, or none) is treated the same way. Rows whose release is not pinned say so.
"""

from __future__ import annotations

from kvlint.catalog.gpus import GpuSpec
from kvlint.record import record
from kvlint.units import GIB

NOT_PINNED = "release not pinned"


@record(frozen=True)
class Change:
    since: tuple[int, ...]
    key: str
    value: object
    source: str


TABLE: tuple[Change, ...] = (
    # gpu_memory_utilization: fraction of total memory per GPU the instance may use
    Change(
        (0, 1),
        "gpu_memory_utilization",
        0.9,
        "EngineArgs default 0.9 (vllm PR #2162 documents it; issue #1018)",
    ),
    Change(
        (0, 21, 99),
        "gpu_memory_utilization",
        0.92,
        "docs.vllm.ai stable cli/serve: 'If unspecified, will use the default value of 0.92' "
        f"({NOT_PINNED}; v0.21 logs still print 0.9000 as the default)",
    ),
    # the engine generation
    Change((0, 1), "engine", "V0", "LLMEngine / vllm/worker/worker.py"),
    Change(
        (0, 8), "engine", "V1", "V1 engine on by default from v0.8.0 (VLLM_USE_V1=0 selects V0 until v0.11)"
    ),
    # max_num_seqs / max_num_batched_tokens for the OpenAI server
    Change(
        (0, 1), "batching", "v0", "V0 SchedulerConfig: 256 sequences, max(max_model_len, 2048) batched tokens"
    ),
    Change(
        (0, 8),
        "batching",
        "v1-256",
        "V1 EngineArgs._set_default_args_v1: 256 sequences; 8192 tokens on H100/H200",
    ),
    Change(
        (0, 9),
        "batching",
        "by-gpu",
        "EngineArgs.get_batch_defaults: >= 70 GiB and not A100 -> 1024 sequences / 8192 tokens, "
        "else 256 / 2048 (OpenAI server)",
    ),
    # CUDA graphs: captured batch sizes and whether their memory comes out of the KV budget
    Change(
        (0, 1),
        "cudagraph_sizes",
        512,
        "capture sizes up to 512 (V0 _BATCH_SIZES_TO_CAPTURE / V1 compilation config)",
    ),
    Change(
        (0, 11),
        "cudagraph_sizes",
        "2x-seqs",
        f"max_cudagraph_capture_size = min(2 x max_num_seqs, 512) (engine_accounting.md A.3; {NOT_PINNED})",
    ),
    Change(
        (0, 1),
        "cudagraph_memory",
        "headroom",
        "graphs captured after the KV cache, out of the (1 - utilization) slack",
    ),
    Change(
        (0, 13),
        "cudagraph_memory",
        "opt-in",
        f"vllm PR #30515 (Dec 2025): VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 subtracts an estimate ({NOT_PINNED})",
    ),
    Change(
        (0, 21),
        "cudagraph_memory",
        "estimated",
        "start-up log: 'CUDA graph memory profiling is enabled (default since v0.21.0)'",
    ),
    # how the profile run's peak is measured (V0; V1 always uses torch's counters)
    Change(
        (0, 1),
        "profile_peak",
        "device-free",
        "vllm/worker/worker.py profile_num_available_blocks (v0.3.3, vllm-project/vllm@82091b8 l.132): "
        "peak_memory = init_gpu_memory - free_gpu_memory, the caching allocator's reserved segments",
    ),
    Change(
        (0, 6, 4),
        "profile_peak",
        "torch-allocated",
        "vllm PR #9352 (Oct 2024): torch.cuda.memory_stats() allocated peak plus non-torch memory "
        f"({NOT_PINNED}; the first release after v0.6.3)",
    ),
    # hybrid KV cache manager (sliding-window / chunked-local / Mamba layers sized to what they hold)
    Change((0, 1), "hybrid_kv", "off", "V0 CacheEngine: every attention layer gets full-length blocks"),
    Change(
        (0, 10),
        "hybrid_kv",
        "on",
        "V1 hybrid KV cache manager (vllm/v1/core/kv_cache_utils.py get_kv_cache_groups): sliding-window "
        "and chunked-local groups hold window + batched tokens; Mamba layers one state per request",
    ),
    # state blocks a running request holds per Mamba / linear-attention group (MambaSpec.max_memory_usage_bytes)
    Change(
        (0, 1),
        "mamba_cache_mode",
        "none",
        "hybrid models run without prefix caching (v0.11 MambaModelConfig: 'disabling prefix caching since it "
        "is not yet supported'; later EngineArgs keeps it opt-in for is_hybrid): one state block per request",
    ),
    Change(
        (0, 27),
        "mamba_cache_mode",
        "align",
        "vllm PR #50991 (merged 2026-08-04, after v0.26.0): prefix caching on by default for hybrid models "
        f"with mamba_cache_mode align, two state blocks per request ({NOT_PINNED})",
    ),
    # block size on CUDA
    Change(
        (0, 1),
        "block_size",
        16,
        "CacheConfig / Platform.check_and_update_config: 16 on CUDA (MLA backends 64)",
    ),
    # async scheduling
    Change((0, 1), "async_scheduling", False, "synchronous scheduler"),
    Change(
        (0, 14),
        "async_scheduling",
        True,
        f"'Asynchronous scheduling is enabled.' logged by default in 2026 builds ({NOT_PINNED}); no effect on memory",
    ),
)

NEWEST_KNOWN = max(c.since for c in TABLE)


def lookup(key: str, version: tuple[int, ...] | None) -> Change:
    """The row in force for `version`; None -> the newest row."""
    rows = [c for c in TABLE if c.key == key]
    if version is None:
        return rows[-1]
    found = rows[0]
    for c in rows:
        if version >= c.since:
            found = c
    return found


def describe(key: str, version: tuple[int, ...] | None) -> str:
    c = lookup(key, version)
    if version is None:
        return f"{c.source}; no vLLM version given: the newest modelled behaviour"
    if version > NEWEST_KNOWN:
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
    """V1 became the default engine in 0.8.0; V0 was removed in 0.11. VLLM_USE_V1=0 selects V0 before that.
    Before 0.11 an encoder-decoder model (mllama's cross-attention) falls back to V0: "['Mllama
    ForConditionalGeneration'] is not supported by the V1 Engine. Falling back to V0." (v0.9.2 log,
    https://github.com/vllm-project/vllm-ascend/issues/1963; vLLM PR #24907 removed V0 encoder-decoder
    support for 0.11)."""
    if version is not None and version < (0, 8):
        return "V0"
    if encoder_decoder and version is not None and version < (0, 11):
        return "V0"
    if use_v1_env == "0" and (version is None or version < (0, 11)):
        return "V0"
    return "V1"


def default_utilization(version: tuple[int, ...] | None) -> tuple[float, str]:
    """From the version table (vllm_versions.py): 0.9 for the releases kvlint has logs of; the
    current docs' 0.92 for newer or unstated versions."""
    value = float(lookup("gpu_memory_utilization", version).value)  # type: ignore[arg-type]
    return (
        value,
        f"vLLM default gpu_memory_utilization {value:g} ({describe('gpu_memory_utilization', version)})",
    )


def default_batching(
    gpu: GpuSpec | None, version: tuple[int, ...] | None, gen: str, max_model_len: int
) -> tuple[int, int, str]:
    """(max_num_seqs, max_num_batched_tokens, note) as EngineArgs.get_batch_defaults sets them for
    the OpenAI server: GPUs with >= 70 GiB that are not A100s get 1024 / 8192, others 256 / 2048.
    Releases before 0.9 used 256 sequences everywhere; V0 batched max(max_model_len, 2048) tokens."""
    if gen == "V0":
        return (
            256,
            max(max_model_len, 2048),
            "vLLM V0 defaults (256 sequences, max(max_model_len, 2048) tokens)",
        )
    if version is not None and version < (0, 9):
        return 256, 2048 if not _big(gpu) else 8192, "vLLM 0.8 defaults (256 sequences)"
    if _big(gpu):
        return (
            1024,
            8192,
            "vLLM default for GPUs with >= 70 GiB that are not A100s (1024 sequences, 8,192 tokens)",
        )
    return 256, 2048, "vLLM default for GPUs under 70 GiB or A100s (256 sequences, 2,048 tokens)"


def _big(gpu: GpuSpec | None) -> bool:
    if gpu is None or gpu.engine_bytes is None:
        return False
    return gpu.engine_bytes >= 70 * GIB and "a100" not in gpu.id


def unknown_version_note(version_text: str | None) -> str | None:
    """What the plan says when the deployment gives no vLLM version (no image tag, `latest`, `nightly`)."""
    if parse_version(version_text) is not None:
        return None
    newest = ".".join(map(str, NEWEST_KNOWN))
    return (
        f"vLLM version {'unknown' if not version_text else repr(version_text) + ' unreadable'}: kvlint applies "
        f"the newest behaviour of its version table (rows to v{newest}: V1 engine, default utilization "
        f"{default_utilization(None)[0]:g}, CUDA-graph memory subtracted as from v0.21, hybrid KV cache manager); "
        "an older release can differ by several GiB, pin the image tag"
    )


def reserved_peak(version: tuple[int, ...] | None) -> bool:
    """V0 before v0.6.4 took the profile peak from free device memory: the allocator's reserved segments
    (version table key profile_peak; the arithmetic in vllm_v0.py)."""
    return lookup("profile_peak", version).value == "device-free"


def subtracts_cuda_graphs(version: tuple[int, ...] | None) -> bool:
    """CUDA-graph memory profiling is on by default since v0.21.0 (its start-up log says so); the
    version table (vllm_versions.py, key cudagraph_memory) holds the rows."""
    return lookup("cudagraph_memory", version).value == "estimated"


__all__ = [
    "TABLE",
    "Change",
    "default_batching",
    "default_utilization",
    "describe",
    "generation",
    "lookup",
    "parse_version",
    "reserved_peak",
    "subtracts_cuda_graphs",
    "unknown_version_note",
]
