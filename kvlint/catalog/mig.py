"""MIG slices: a profile (`3g.40gb`) on a parent card -> a GpuSpec with the slice's memory.

The engine in a MIG slice sees only the slice: `nvidia.com/mig-1g.10gb: 1` on an A100-80GB gives
vLLM 9.5 GiB, not 80. Figures per parent and profile are in data/mig.json, each with its source.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import Any

from kvlint.catalog.gpus import DATA, GpuSpec, by_id, replace_spec

PROFILE = re.compile(r"^(\d)g\.(\d+)gb$")
RESOURCE = re.compile(r"^nvidia\.com/mig-(\d g\.\d+gb)$".replace(" ", ""))
GIB = 1 << 30


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    with open(os.path.join(DATA, "mig.json"), encoding="utf-8") as fh:
        return json.load(fh)


def normalise(profile: str) -> str | None:
    """'MIG 3g.40gb', '3g.40gb+me', '3G.40GB' -> '3g.40gb'; None when it is not a profile name."""
    text = profile.strip().lower()
    text = re.sub(r"^(mig[\s_-]*)", "", text)
    text = re.sub(r"\+\w+$", "", text)  # +me (media extensions): the same memory
    return text if PROFILE.match(text) else None


def resource_profile(resource: str) -> str | None:
    """`nvidia.com/mig-3g.40gb` (the device plugin's mixed strategy) -> '3g.40gb'."""
    m = RESOURCE.match(resource.strip().lower())
    return m.group(1) if m else None


def _family(parent_id: str) -> dict[str, Any] | None:
    for fam in _data()["families"].values():
        if parent_id in fam["parents"]:
            return fam
    return None


def profiles_of(parent_id: str) -> list[str]:
    fam = _family(parent_id)
    return list(fam["profiles"]) if fam else []


def slice_spec(parent_id: str, profile: str) -> GpuSpec | None:
    """The slice as a GPU of its own: id `parent:profile`, the slice's memory, the parent's features."""
    parent = by_id(parent_id)
    prof = normalise(profile)
    fam = _family(parent_id)
    if parent is None or prof is None or fam is None or prof not in fam["profiles"]:
        return None
    entry = fam["profiles"][prof]
    if entry.get("marketed"):
        memory = int(PROFILE.match(prof).group(2)) * 10**9  # type: ignore[union-attr]
        source = f"MIG {prof}: the profile name's {memory // 10**9} GB ({entry['source']})"
    else:
        memory = int(round(float(entry["gib"]) * GIB))
        source = f"MIG {prof}: {entry['gib']} GiB by nvidia-smi mig -lgip ({entry['source']})"
    return replace_spec(
        parent,
        id=f"{parent.id}:{prof}",
        name=f"{parent.name} MIG {prof}",
        engine_bytes=memory,
        engine_bytes_source=source,
        smi_total_mib=None,
        marketed=f"{prof} slice of {parent.marketed or parent.name}",
        mig_profile=prof,
        parent=parent.id,
    )


def parents_offering(profile: str) -> list[str]:
    """Parent cards whose MIG guide table has this profile (1g.10gb: A100-80GB and H100-80GB)."""
    prof = normalise(profile)
    out: list[str] = []
    for fam in _data()["families"].values():
        if prof in fam["profiles"]:
            out.extend(fam["parents"])
    return out


def smallest_slice(profile: str, parents: list[str] | None = None) -> tuple[GpuSpec | None, list[str]]:
    """The slice with the least memory among the parents that offer the profile (what is guaranteed
    when the file does not say which card is partitioned), and the parent ids considered."""
    candidates = [p for p in (parents or parents_offering(profile)) if _family(p) is not None]
    specs = [s for s in (slice_spec(p, profile) for p in candidates) if s is not None]
    if not specs:
        return None, candidates
    return min(specs, key=lambda s: s.engine_bytes or 0), candidates


def split(name: str) -> tuple[str, str] | None:
    """'a100-80gb:3g.40gb', 'A100-80GB MIG 3g.40gb', 'NVIDIA-A100-SXM4-80GB-MIG-3g.40gb' -> (card, profile)."""
    m = re.match(r"^(.*?)(?:[\s:_-]+mig[\s_-]*|:)(\dg\.\d+gb)(?:\+\w+)?$", name.strip(), re.IGNORECASE)
    if not m or not m.group(1):
        return None
    return m.group(1), m.group(2).lower()
