"""SGLang's memory rules by release: one `Rules` per release read, folded from the rows of
data/releases.json (one row per change, each citing the file:lines of the `sglang==X` wheel it was read
in; the file's `keys` say what each field means). defaults.py applies them: a release between two read
rows takes the rules of the latest read row at or below it, and a version kvlint cannot read (no image
tag, `latest`) takes the newest row, and says so.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kvlint.engines import facts
from kvlint.record import record

# What turns the default-on prefill (piecewise / breakable) CUDA graph off, so that it reserves nothing:
# speculative decoding, DP attention, PP > 1, an AMD GPU, a multimodal checkpoint, LoRA, any MLA model,
# an MLA model without DeepSeek sparse attention (the values of the prefill_off rows)
SPEC, DPA, PP, AMD, MM, LORA, MLA, MLA_NON_DSA = "spec", "dp", "pp", "amd", "mm", "lora", "mla", "mla-non-dsa"
TC_OFF = (DPA, PP, AMD, LORA)  # tc_piecewise's rules that kvlint reads (v0.5.14 on)


@record(frozen=True)
class Rules:
    """What one read release does (defaults.py applies it; data/releases.json `keys` explain the fields)."""

    first: tuple[int, ...]  # the first release these rules hold for
    read_at: str
    fraction: str
    multimodal: str
    multimodal_factor: float
    small_chunked: int
    small_graph_bs: int
    small_graph_bs_tp4: int
    spec_mb: int
    piecewise: str
    piecewise_form: str
    prefill_graph_64_from: int
    prefill_off: tuple[str, ...]
    prefill_off_families: tuple[str, ...]
    mm_default_archs: tuple[str, ...]
    mm_tc_archs: tuple[str, ...]
    cap_total: bool
    cap_context: bool
    prefill_gated: bool
    graph_gated: bool
    mm_reserve_mb: int
    unknown_fraction: float
    graph_bs_capped: bool
    stated_reqs_cap: str
    mamba_pool: str


@cache
def releases() -> tuple[Rules, ...]:
    """The rules of each release read, oldest first: every key's row in force at each release a read_at
    row names (every row starts at such a release, tests/test_sglang_releases.py)."""
    rows = sorted(
        facts.changes("sglang", width=4), key=lambda c: c.since
    )  # stable: a key's rows keep their order
    now: dict[str, Any] = {}
    out = []
    for i, c in enumerate(rows):
        now[c.key] = tuple(c.value) if isinstance(c.value, list) else c.value
        if i + 1 == len(rows) or rows[i + 1].since != c.since:
            out.append(Rules(first=c.since, **now))
    return tuple(out)


def newest_read() -> str:
    """The newest SGLang release on PyPI when the rows were read ('v0.5.23')."""
    return "v" + facts.load("sglang", "releases")["newest_read"]


__all__ = [
    "AMD",
    "DPA",
    "LORA",
    "MLA",
    "MLA_NON_DSA",
    "MM",
    "PP",
    "SPEC",
    "TC_OFF",
    "Rules",
    "newest_read",
    "releases",
]
