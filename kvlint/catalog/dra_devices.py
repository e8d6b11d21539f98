"""Catalogued GPUs as a DRA driver publishes them in its ResourceSlices, for CEL selectors.

NVIDIA's driver (gpu.nvidia.com) publishes `productName` = the NVML name (what nvidia-smi prints:
"NVIDIA H100 80GB HBM3"), `architecture` = "Volta" … "Hopper", "Blackwell" and the capacity
`memory` = the NVML total (nvidia-smi's MiB: an H200 publishes 143771Mi), `type` "gpu"; MIG devices
(mig.nvidia.com) publish type "mig", the parent's productName, `profile` ("1g.10gb") and the slice's
memory. Sources: ResourceSlice listings in public repositories (find_string 'architecture:
string: Hopper': productName "NVIDIA H100 80GB HBM3", "NVIDIA H200" with memory 143771Mi), the
driver's MIG examples (`device.attributes['gpu.nvidia.com'].profile == '1g.5gb'`).
AMD's driver (gpu.amd.com, ROCm/k8s-gpu-dra-driver) publishes productName, memory and
targetGfxVersion (gfx90a MI210/MI250X, gfx942 MI300X/MI325X, gfx950 MI355X); type "amdgpu" for
a whole card.

Where the catalog lacks a fact (no nvidia-smi name, no smi total) the device leaves it out and a
selector term on it is unknown, never a guess; a card whose smi total is unknown publishes the
memory the engine sees (a little less than the NVML total), said in the note.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kvlint.catalog import gpus as catalog
from kvlint.catalog import mig
from kvlint.catalog.gpus import GpuSpec

MIB = 1 << 20

# NVML's architecture names by compute capability (NVML_DEVICE_ARCH_*; go-nvml prints the Ada
# generation as "Ada Lovelace", some tools as "Ada": both are accepted).
ARCHITECTURES: dict[int, frozenset[str]] = {
    70: frozenset({"Volta"}),
    75: frozenset({"Turing"}),
    80: frozenset({"Ampere"}),
    86: frozenset({"Ampere"}),
    87: frozenset({"Ampere"}),
    89: frozenset({"Ada Lovelace", "Ada"}),
    90: frozenset({"Hopper"}),
    100: frozenset({"Blackwell"}),
    103: frozenset({"Blackwell"}),
    120: frozenset({"Blackwell"}),
}
DRIVERS = {"nvidia": "gpu.nvidia.com", "amd": "gpu.amd.com"}


def _raw(gpu_id: str) -> dict[str, Any]:
    for entry in catalog._data()["gpus"]:
        if entry["id"] == gpu_id:
            return entry
    return {}


def _card(spec: GpuSpec) -> dict[str, Any]:
    raw = _raw(spec.id)
    facts: dict[str, Any] = {"driver": DRIVERS.get(spec.vendor, spec.vendor), "vendor": spec.vendor}
    if spec.vendor == "amd":
        facts["type"] = "amdgpu"
        facts["productName"] = raw.get("dra_product_name") or spec.name
        if raw.get("gfx_target"):
            facts["targetGfxVersion"] = raw["gfx_target"]
    else:
        facts["type"] = "gpu"
        if spec.nvidia_smi_name:
            facts["productName"] = spec.nvidia_smi_name
        if spec.cc_int in ARCHITECTURES:
            facts["architecture"] = ARCHITECTURES[spec.cc_int]  # type: ignore[index]
    if spec.smi_total_mib:
        facts["memory"] = spec.smi_total_mib * MIB
    elif spec.engine_bytes:
        facts["memory"] = spec.engine_bytes
        facts["memory_note"] = "the memory the engine sees (no nvidia-smi total known)"
    return facts


@lru_cache(maxsize=4)
def devices(vendor: str, kind: str) -> tuple[tuple[GpuSpec, dict[str, Any]], ...]:
    """Every catalogued card of a vendor with a known memory (kind "gpu"), or every MIG slice ("mig")."""
    out: list[tuple[GpuSpec, dict[str, Any]]] = []
    for entry in catalog._data()["gpus"]:
        spec = catalog.by_id(entry["id"])
        if spec is None or spec.vendor != vendor or not spec.engine_bytes:
            continue
        if kind == "gpu":
            out.append((spec, _card(spec)))
            continue
        for profile in mig.profiles_of(spec.id):
            sl = catalog.slice_spec(spec.id, profile)
            if sl is None:
                continue
            facts = _card(spec)
            facts.update(type="mig", profile=profile, memory=sl.engine_bytes)
            facts.pop("memory_note", None)
            out.append((sl, facts))
    return tuple(out)
