"""SGLang's defaults by release, as python/sglang/srt/server_args.py sets them (ServerArgs.__post_init__).

Three generations of the `--mem-fraction-static` default, each from the source of the releases
people pin (read in public copies of server_args.py; the PRs are the change points):

  * up to v0.4.6  - a fixed fraction by tensor-parallel size: TP>=16 0.79, >=8 0.81, >=4 0.85,
    >=2 0.87, else 0.88; chunked_prefill_size 2048 below 25,000 MB of GPU memory, else 8192;
    cuda_graph_max_bs 8 (TP<4) / 80 (TP>=4) below 25,000 MB, else the runner's 160.
  * v0.4.7 .. v0.5.2 - PR sglang#7054 "Simplify the heuristics for setting --mem-fraction-static"
    (merged 2025-06-10): reserved MB by GPU class, (2.8 + TPxPP/10) x 1024 under 35 GiB,
    (9.5 + TPxPP/2) x 1024 under 90 GiB, (12 + TPxPP/2) x 1024 under 160 GiB, else 32 x 1024;
    +2 GiB with speculative decoding, +4 GiB with DP attention;
    mem_fraction_static = round((gpu_mem - reserved) / gpu_mem, 3).
  * v0.5.3 and later - PR sglang#10975 "Use more general heuristics to set the default value of
    --mem-fraction-static" (merged 2025-09-27), ServerArgs._handle_gpu_memory_settings:
    chunked_prefill_size / cuda_graph_max_bs by GPU class, then
    reserved = 512 + max(chunked_prefill_size, 2048) x 1.5 + cuda_graph_max_bs x 2 + TPxPP/8 x 1024
    (+ cuda_graph_max_bs x DP x 3 with DP attention; at least 10 GiB on GPUs over 60 GiB;
    +2 GiB for EAGLE-style speculative decoding, +6 GiB for STANDALONE).

The first release carrying each PR is taken as the first tag after its merge date (v0.4.7 and
v0.5.3); the logs in benchmarks/calibration/sglang_startup_logs.yaml agree (s-001, v0.4.3 at TP 4,
prints 0.85; s-003 and s-006, v0.4.4 at TP 1, print 0.88; s-009, a 2026 build on 4 x B200, implies 0.852
against this formula's 0.855).
A version kvlint does not know (no image tag, `latest`) gets the newest generation, and says so.
`gpu_mem` is what nvidia-smi reports in MiB (get_nvgpu_memory_capacity), not torch's total.
"""

from __future__ import annotations

import re

from kvlint.record import record

TP_TIERS = "tp-tiers"  # <= 0.4.6
GPU_TIERS = "gpu-tiers"  # 0.4.7 .. 0.5.2 (PR #7054)
RESERVED = "reserved-formula"  # >= 0.5.3 (PR #10975)
NEWEST = RESERVED

ERA_SOURCE = {
    TP_TIERS: "SGLang <= v0.4.6 server_args.py: fixed mem_fraction_static by TP size",
    GPU_TIERS: "SGLang v0.4.7-v0.5.2 server_args.py (PR sglang#7054): reserved memory by GPU class",
    RESERVED: "SGLang >= v0.5.3 server_args.py _handle_gpu_memory_settings (PR sglang#10975)",
}
UNKNOWN_FRACTION = 0.88  # every generation: "else: self.mem_fraction_static = 0.88" when gpu_mem is unknown


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """'v0.4.6.post1-cu124' -> (0, 4, 6); None for latest, nightly, dev or anything unreadable."""
    if not text:
        return None
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", str(text).strip())
    if not m:
        return None
    return tuple(int(p) for p in m.groups() if p is not None)


def era(version: tuple[int, ...] | None) -> str:
    if version is None:
        return NEWEST
    if version < (0, 4, 7):
        return TP_TIERS
    if version < (0, 5, 3):
        return GPU_TIERS
    return RESERVED


@record(frozen=True)
class SglangDefaults:
    mem_fraction_static: float
    chunked_prefill_size: int
    cuda_graph_max_bs: int
    source: str


def gpu_class(gpu_mb: float, tp: int, era_name: str) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) the release picks for a GPU of gpu_mb MiB."""
    small = 8 if tp < 4 else 80
    if era_name == TP_TIERS:
        return (2048, small) if gpu_mb < 25_000 else (8192, 160)
    if era_name == GPU_TIERS:
        if gpu_mb < 35 * 1024:
            return 2048, small
        return (8192, 160) if gpu_mb < 160 * 1024 else (16384, 160)
    if gpu_mb < 20 * 1024:
        return 2048, 8
    if gpu_mb < 35 * 1024:
        return 2048, 24 if tp < 4 else 80
    if gpu_mb < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mb < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def _tp_tier_fraction(tp: int) -> float:
    for floor, frac in ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87)):
        if tp >= floor:
            return frac
    return 0.88


def _gpu_tier_reserved(gpu_mb: float, parallel: int, spec: bool, dp_attention: bool) -> float:
    if gpu_mb < 35 * 1024:
        reserved = (2.8 + parallel / 10) * 1024
    elif gpu_mb < 90 * 1024:
        reserved = (9.5 + parallel / 2) * 1024
    elif gpu_mb < 160 * 1024:
        reserved = (12 + parallel / 2) * 1024
    else:
        reserved = 32 * 1024
    return reserved + (2 * 1024 if spec else 0) + (4 * 1024 if dp_attention else 0)


def _formula_reserved(
    gpu_mb: float, parallel: int, chunked: int, graph_bs: int, dp: int, dp_attention: bool, spec: str | None
) -> float:
    reserved = 512 + max(chunked, 2048) * 1.5 + graph_bs * 2 + parallel / 8 * 1024
    if dp_attention:
        reserved += graph_bs * dp * 3
    if gpu_mb > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if spec and spec.upper() == "STANDALONE":
        reserved += 6 * 1024
    elif spec and spec.upper() != "NGRAM":
        reserved += 2 * 1024
    return reserved


def defaults(
    gpu_mb: float | None,
    tp: int,
    pp: int,
    version: tuple[int, ...] | None,
    *,
    dp: int = 1,
    dp_attention: bool = False,
    speculative: str | None = None,
    chunked: int | None = None,
    graph_bs: int | None = None,
) -> SglangDefaults:
    """The defaults SGLang of `version` picks on a GPU of gpu_mb MiB (None: unknown GPU)."""
    name = era(version)
    label = ERA_SOURCE[name] + ("" if version is not None else " (no version given: the newest modelled)")
    if not gpu_mb:
        frac = _tp_tier_fraction(tp) if name == TP_TIERS else UNKNOWN_FRACTION
        return SglangDefaults(frac, chunked or 4096, graph_bs or 160, label + "; GPU memory unknown")
    c_default, g_default = gpu_class(gpu_mb, tp, name)
    c = chunked if chunked and chunked > 0 else c_default
    if dp_attention and dp > 1 and not chunked:
        c = c // dp  # "DP attention is enabled. The chunked prefill size is adjusted to ..."
    g = graph_bs or g_default
    if name == TP_TIERS:
        frac = _tp_tier_fraction(tp)
    else:
        parallel = tp * pp
        if name == GPU_TIERS:
            reserved = _gpu_tier_reserved(gpu_mb, parallel, bool(speculative), dp_attention)
        else:
            reserved = _formula_reserved(gpu_mb, parallel, c, g, dp, dp_attention, speculative)
        frac = round((gpu_mb - reserved) / gpu_mb, 3)
    return SglangDefaults(frac, c, g, label)


def max_num_reqs(kv_tokens: int, context_len: int) -> int:
    """Request-pool size when --max-running-requests is unset (model_runner init_memory_pool):
    min(max(int(max_total_num_tokens / context_len x 512), 2048), 4096)."""
    return min(max(int(kv_tokens / max(1, context_len) * 512), 2048), 4096)


__all__ = ["NEWEST", "SglangDefaults", "defaults", "era", "max_num_reqs", "parse_version"]
