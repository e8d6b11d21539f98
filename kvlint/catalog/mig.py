"""MIG slices: a profile (`3g.40gb`) on a parent card -> a GpuSpec with the slice's memory.

The engine in a MIG slice sees only the slice: `nvidia.com/mig-1g.10gb: 1` on an A100-80GB gives
vLLM 9.5 GiB, not 80. Figures per parent and profile are in data/mig.json, each with its source.
This module reads the table only; catalog/gpus.py builds the slice's GpuSpec from it.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import Any

from kvlint.lazy_re import lazy

DATA = os.path.join(os.path.dirname(__file__), "data")

PROFILE = lazy(r"^(\d)g\.(\d+)gb$")
RESOURCE = lazy(r"^nvidia\.com/mig-(\d g\.\d+gb)$".replace(" ", ""))
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
    return text if PROFILE().match(text) else None


def resource_profile(resource: str) -> str | None:
    """`nvidia.com/mig-3g.40gb` (the device plugin's mixed strategy) -> '3g.40gb'."""
    m = RESOURCE().match(resource.strip().lower())
    return m.group(1) if m else None


def _family(parent_id: str) -> dict[str, Any] | None:
    for fam in _data()["families"].values():
        if parent_id in fam["parents"]:
            return fam
    return None


def profiles_of(parent_id: str) -> list[str]:
    fam = _family(parent_id)
    return list(fam["profiles"]) if fam else []


def slice_memory(parent_id: str, profile: str) -> tuple[int, str] | None:
    """(bytes the engine sees in the slice, where the figure comes from); None if the card has no such profile."""
    prof = normalise(profile)
    fam = _family(parent_id)
    if prof is None or fam is None or prof not in fam["profiles"]:
        return None
    entry = fam["profiles"][prof]
    if entry.get("marketed"):
        memory = int(PROFILE().match(prof).group(2)) * 10**9  # type: ignore[union-attr]
        return memory, f"MIG {prof}: the profile name's {memory // 10**9} GB ({entry['source']})"
    memory = int(round(float(entry["gib"]) * GIB))
    return memory, f"MIG {prof}: {entry['gib']} GiB by nvidia-smi mig -lgip ({entry['source']})"


def parents_offering(profile: str) -> list[str]:
    """Parent cards whose MIG guide table has this profile (1g.10gb: A100-80GB and H100-80GB)."""
    prof = normalise(profile)
    out: list[str] = []
    for fam in _data()["families"].values():
        if prof in fam["profiles"]:
            out.extend(fam["parents"])
    return out


def split(name: str) -> tuple[str, str] | None:
    """'a100-80gb:3g.40gb', 'A100-80GB MIG 3g.40gb', 'NVIDIA-A100-SXM4-80GB-MIG-3g.40gb' -> (card, profile)."""
    m = re.match(r"^(.*?)(?:[\s:_-]+mig[\s_-]*|:)(\dg\.\d+gb)(?:\+\w+)?$", name.strip(), re.IGNORECASE)
    if not m or not m.group(1):
        return None
    return m.group(1), m.group(2).lower()
