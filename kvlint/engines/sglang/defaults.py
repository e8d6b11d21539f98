"""SGLang's defaults by release, as each release's python/sglang/srt/server_args.py sets them.

Every row of data/releases.json was read in the released package (the PyPI wheel `sglang==X`, the same files
as the tag) at the release named in it; a release between two read rows takes the rules of the
latest read row at or below it, and a version kvlint cannot read (no image tag, `latest`) takes the
newest row, and says so. `gpu_mem` is what nvidia-smi reports in MiB (get_nvgpu_memory_capacity),
not torch's total. The `--mem-fraction-static` default has had these forms:

  * tp       v0.4.3-v0.4.5: a fixed fraction by TP size (>=16 0.79, >=8 0.81, >=4 0.85, >=2 0.87,
             else 0.88) - server_args.py `if self.tp_size >= 16: ... 0.79`.
  * tp-13g   v0.4.6, v0.4.6.post1: the TP tiers up to 81,920 MiB, above that
             (gpu_mem - 13 x 1024) / gpu_mem (`# FIXME: more fine grained auto-selection polices`).
  * tp-48g   v0.4.6.post2-v0.4.6.post5: tiers by TP x PP up to 81,920 MiB, else 0.88; above 96 GiB
             min(f + 48 x 1024 x (1 - f) / gpu_mem, (gpu_mem - 18 x 1024) / gpu_mem).
  * tp-b200  v0.4.7: as tp-48g, but 0.79 above 180,000 MiB on CUDA, 20 GiB instead of 18 with
             speculative decoding, and x 0.95 for speculative decoding at or below 96 GiB.
  * gpu-tiers v0.4.8-v0.5.2 (sgl-project/sglang PR 7054): reserved MiB by GPU class,
             (2.8 + TPxPP/10) x 1024 under 35 GiB, (9.5 + TPxPP/2) x 1024 under 90 GiB, (12 + TPxPP/2) x
             1024 under 160 GiB, else 32 x 1024; +2 GiB speculative, +4 GiB DP attention;
             round((gpu_mem - reserved) / gpu_mem, 3).
  * reserved v0.5.3 on (PR 10975, ServerArgs._handle_gpu_memory_settings; v0.5.23:
             arg_groups/memory_hook.py): 512 + max(chunked_prefill_size, 2048) x 1.5 + decode graph
             max bs x 2 + TPxPP/8 x 1024 (+ graph bs x DP x 3, and x 1.5 more above bs 300, with DP
             attention) + the prefill (piecewise) CUDA-graph reserve, at least 10 GiB above 60 GiB,
             + the speculative-decoding reserve. --enable-piecewise-cuda-graph reserves nothing up to
             v0.5.5, piecewise_cuda_graph_max_tokens (default 4096) // 4 MiB in v0.5.5.post1-v0.5.6.post2
             and // 8 (default: the chunked prefill size) in v0.5.7, both after the floor and the
             speculative reserve; from v0.5.8 capture sizes x 8 MB before the floor.

The multimodal reduction moved too: model_runner.py multiplies the fraction in use (stated or
default) by 0.95 up to v0.4.4 and by 0.90 in v0.4.5-v0.4.8 ("Automatically reduce
--mem-fraction-static ... because this is a multimodal model"); v0.4.9 multiplies only the default
by 0.90 in server_args.py; from v0.4.10 `adjust_mem_fraction_for_vlm` scales only the default by
0.95 x clamp(1 - 0.1 x (L x H^2 / (24 x 1024^2) - 1), 0.8, 1.05) with L, H the vision_config's
num_hidden_layers (default 24) and hidden_size (default 1024).

The rows, and where each release was read, are in data/releases.json (releases.py folds them).
"""

from __future__ import annotations

import re

from kvlint.engines.sglang.releases import (
    AMD,
    DPA,
    LORA,
    MLA,
    MLA_NON_DSA,
    MM,
    PP,
    SPEC,
    TC_OFF,
    Rules,
    newest_read,
    releases,
)
from kvlint.record import record

TP_TIERS = "tp-tiers"  # <= 0.4.7: fixed fractions by TP size (with large-GPU variants)
GPU_TIERS = "gpu-tiers"  # 0.4.8 .. 0.5.2 (PR #7054)
RESERVED = "reserved-formula"  # >= 0.5.3 (PR #10975)
NEWEST = RESERVED
WHEEL = "read in sglang {} server_args.py / model_runner.py (PyPI wheels)"


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """'v0.4.6.post1-cu124' -> (0, 4, 6, 1); '0.5.3' -> (0, 5, 3, 0); None for latest, dev, ..."""
    if not text:
        return None
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.?post(\d+))?", str(text).strip())
    if not m:
        return None
    return tuple(int(p or 0) for p in m.groups())


def rules(version: tuple[int, ...] | None) -> Rules:
    if version is None:
        return releases()[-1]
    picked = releases()[0]
    for row in releases():
        if tuple(version) >= row.first:
            picked = row
    return picked


def era(version: tuple[int, ...] | None) -> str:
    kind = rules(version).fraction
    return RESERVED if kind == "reserved" else GPU_TIERS if kind == "gpu-tiers" else TP_TIERS


def source(version: tuple[int, ...] | None) -> str:
    row = rules(version)
    text = f"SGLang {row.fraction} defaults, " + WHEEL.format(row.read_at)
    return text + (
        "" if version is not None else f" (no version given: the newest release read, {newest_read()})"
    )


@record(frozen=True)
class SglangDefaults:
    mem_fraction_static: float
    chunked_prefill_size: int
    cuda_graph_max_bs: int
    source: str


def gpu_class(gpu_mb: float, tp: int, row: Rules) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) the release picks for a GPU of gpu_mb MiB."""
    small = 8 if tp < 4 else 80
    if row.fraction in ("tp", "tp-13g", "tp-48g", "tp-b200"):
        if gpu_mb < 25_000:
            return 2048, small
        return (16384 if row.fraction == "tp-b200" and gpu_mb > 180_000 else 8192), 160
    if row.fraction == "gpu-tiers":
        if gpu_mb < 35 * 1024:
            return 2048, small
        return (8192, 160) if gpu_mb < 160 * 1024 else (16384, 160)
    if gpu_mb < 20 * 1024:
        return 2048, 8
    if gpu_mb < 35 * 1024:
        return row.small_chunked, row.small_graph_bs if tp < 4 else row.small_graph_bs_tp4
    if gpu_mb < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mb < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def _tp_tier_fraction(parallel: int) -> float:
    for floor, frac in ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87)):
        if parallel >= floor:
            return frac
    return 0.88


def _tp_era_fraction(row: Rules, gpu_mb: float, tp: int, pp: int, spec: bool) -> float:
    if row.fraction == "tp":
        return _tp_tier_fraction(tp)
    if row.fraction == "tp-13g":
        return _tp_tier_fraction(tp) if gpu_mb <= 81920 else (gpu_mb - 1024 * 13) / gpu_mb
    frac = _tp_tier_fraction(tp * pp) if gpu_mb <= 81920 else 0.88
    if row.fraction == "tp-b200" and gpu_mb > 180 * 1000:
        return 0.79
    if gpu_mb > 96 * 1024:
        reserve = 1024 * (20 if spec and row.fraction == "tp-b200" else 18)
        return min(frac + 48 * 1024 * (1 - frac) / gpu_mb, (gpu_mb - reserve) / gpu_mb)
    return frac * 0.95 if spec and row.fraction == "tp-b200" else frac


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


def prefill_graph_sizes(max_tokens: int, row: Rules) -> list[int]:
    """The piecewise / prefill CUDA-graph capture sizes (`_generate_piecewise_cuda_graph_tokens`)."""
    sizes = (
        list(range(4, 33, 4))
        + list(range(48, 257, 16))
        + list(range(288, 513, 32))
        + list(range(row.prefill_graph_64_from, 1024 + 1, 64))
        + list(range(1280, 4096 + 1, 256))
        + list(range(4608, max_tokens + 1, 512))
    )
    return [s for s in sizes if s <= max_tokens]


def _piecewise_on(row: Rules, kw: dict) -> bool:
    """Whether the release captures (and so reserves for) prefill / piecewise CUDA graphs: opt-in up
    to v0.5.9, from v0.5.10 on by default unless one of the row's `prefill_off` conditions holds
    (v0.5.10 _handle_piecewise_cuda_graph; v0.5.14-v0.5.18 _apply_cuda_graph_compatibility; v0.5.19 on
    arg_groups/cuda_graph_hook.py) or --disable-cuda-graph turns it off (v0.5.14 on)."""
    explicit = kw.get("piecewise")
    if row.piecewise == "none" or explicit is False:
        return False
    if row.piecewise == "opt-in" or explicit is True:
        return explicit is True  # --enable- / --enforce-piecewise-cuda-graph, an explicit prefill backend
    if row.prefill_gated and not kw.get("cuda_graph", True):
        return False
    if kw.get("family") in row.prefill_off_families:
        return False
    conditions = row.prefill_off
    if kw.get(MM) and kw.get("arch_name") in row.mm_default_archs:
        conditions = tuple(c for c in conditions if c != MM)
    elif kw.get(MM) and kw.get("arch_name") in row.mm_tc_archs:
        conditions = TC_OFF
    return not any(kw.get(condition) for condition in conditions)


def _prefill_max_tokens(row: Rules, chunked: int, kw: dict) -> int:
    """The prefill graph's largest capture: stated, else the chunked prefill size (MLA: 2048), capped
    at --max-total-tokens (v0.5.10 on) and clamped to a stated --context-length (v0.5.13-v0.5.16)."""
    stated, mla = kw.get("piecewise_max_tokens"), kw.get(MLA, False)
    tokens = stated or (chunked if not mla else 2048)
    if not stated and row.cap_total and kw.get("max_total_tokens"):
        tokens = min(tokens, kw["max_total_tokens"])
    if row.cap_context and kw.get("context_length"):
        tokens = min(tokens, kw["context_length"])
    return tokens


def _piecewise_mb(row: Rules, chunked: int, kw: dict) -> float:
    if not _piecewise_on(row, kw):
        return 0.0
    if row.piecewise_form != "sizes":
        # piecewise_cuda_graph_max_tokens: 4096 by default up to v0.5.6.post2, chunked_prefill_size in v0.5.7
        max_tokens = kw.get("piecewise_max_tokens") or (4096 if row.piecewise_form == "tokens/4" else chunked)
        return max_tokens // (4 if row.piecewise_form == "tokens/4" else 8)
    if kw.get(MLA) and row.piecewise == "default":
        return 1.5 * 1024  # "For MLA backend the memory overhead is much higher than expected with fa3"
    return len(prefill_graph_sizes(_prefill_max_tokens(row, chunked, kw), row)) * 8


def _formula_reserved(gpu_mb: float, parallel: int, c: int, g: int, row: Rules, **kw) -> float:
    dp, dp_attention, spec = kw.get("dp", 1), kw.get(DPA, False), kw.get(SPEC)
    graphs = kw.get("decode_graph", True) or not row.graph_gated
    reserved = 512 + max(c, 2048) * 1.5 + (g * 2 if graphs else 0) + parallel / 8 * 1024
    if dp_attention:
        reserved += g * dp * 3 + (g * dp * 1.5 if g > 300 else 0)
    piecewise = _piecewise_mb(row, c, kw)
    reserved += piecewise if row.piecewise_form == "sizes" else 0
    if gpu_mb > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if spec and spec.upper() == "STANDALONE" and row.spec_mb:
        reserved += 6 * 1024
    elif spec and spec.upper() != "NGRAM":
        reserved += row.spec_mb
    return reserved + (piecewise if row.piecewise_form != "sizes" else 0)


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
    mla: bool = False,
    dsa: bool = False,
    piecewise: bool | None = None,
    piecewise_max_tokens: int | None = None,
    cuda_graph: bool = True,
    decode_graph: bool = True,
    multimodal: bool = False,
    amd: bool = False,
    lora: bool = False,
    max_total_tokens: int | None = None,
    context_length: int | None = None,
    max_running: int | None = None,
    family: str = "",
    arch_name: str = "",
) -> SglangDefaults:
    """The defaults SGLang of `version` picks on a GPU of gpu_mb MiB (None: unknown GPU);
    context_length is a stated --context-length (None when the model's own applies)."""
    row = rules(version)
    label = source(version)
    if not gpu_mb:
        frac = _tp_tier_fraction(tp) if row.fraction == "tp" else row.unknown_fraction
        return SglangDefaults(frac, chunked or 4096, graph_bs or 160, label + "; GPU memory unknown")
    c_default, g_default = gpu_class(gpu_mb, tp, row)
    c = chunked if chunked and chunked > 0 else c_default
    g = graph_bs or g_default
    if row.graph_bs_capped and not graph_bs and max_running:
        g = min(g, max_running)  # v0.5.22 memory_hook: a defaulted max bs above --max-running-requests
    if row.fraction == "gpu-tiers":
        frac = round(
            (gpu_mb - _gpu_tier_reserved(gpu_mb, tp * pp, bool(speculative), dp_attention)) / gpu_mb, 3
        )
    elif row.fraction == "reserved":
        kw = {"dp": dp, DPA: dp_attention, SPEC: speculative, MLA: mla, MLA_NON_DSA: mla and not dsa}
        kw |= {PP: pp > 1, MM: multimodal, AMD: amd, LORA: lora, "cuda_graph": cuda_graph}
        kw |= {"decode_graph": decode_graph and cuda_graph, "family": family, "arch_name": arch_name}
        kw |= {"piecewise": piecewise, "piecewise_max_tokens": piecewise_max_tokens}
        kw |= {"max_total_tokens": max_total_tokens, "context_length": context_length}
        frac = round((gpu_mb - _formula_reserved(gpu_mb, tp * pp, c, g, row, **kw)) / gpu_mb, 3)
    else:
        frac = _tp_era_fraction(row, gpu_mb, tp, pp, bool(speculative))
    if dp_attention and dp > 1 and not chunked:
        # _handle_data_parallelism runs after _handle_gpu_memory_settings (v0.5.3 server_args.py:471/488,
        # v0.5.11 :842/866, v0.5.19 arg_groups/pipeline.py:228/284): the reserve above takes the whole
        # chunk; "DP attention is enabled. The chunked prefill size is adjusted to ..." comes after
        c = c // dp
    return SglangDefaults(frac, c, g, label)


def multimodal_factor(
    version: tuple[int, ...] | None, defaulted: bool, vision_layers: int | None, vision_hidden: int | None
) -> float:
    """What the release multiplies mem_fraction_static by for a checkpoint with a vision tower."""
    row = rules(version)
    if row.multimodal != "runner" and not defaulted:
        return 1.0
    if row.multimodal != "vit":
        return row.multimodal_factor
    ratio = (vision_layers or 24) * (vision_hidden or 1024) ** 2 / (24 * 1024**2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def max_num_reqs(kv_tokens: int, context_len: int) -> int:
    """Request-pool size when --max-running-requests is unset (model_runner init_memory_pool):
    min(max(int(max_total_num_tokens / context_len x 512), 2048), 4096)."""
    return min(max(int(kv_tokens / max(1, context_len) * 512), 2048), 4096)


def stated_running(version_text: str | None, stated: int, pool_reqs: int, kv_tokens: int) -> int:
    """A stated --max-running-requests (per DP-attention worker) as the model runner keeps it: at most
    the request pool in v0.5.10-v0.5.13, at most tokens // 2 from v0.5.14 (_resolve_max_num_reqs);
    as stated in the releases read before v0.5.10."""
    cap = rules(parse_version(version_text)).stated_reqs_cap
    if cap == "pool":
        return min(stated, pool_reqs)
    return min(stated, max(1, kv_tokens // 2)) if cap == "tokens" else stated


__all__ = [
    "NEWEST",
    "SglangDefaults",
    "defaults",
    "era",
    "max_num_reqs",
    "multimodal_factor",
    "parse_version",
    "rules",
    "stated_running",
]
