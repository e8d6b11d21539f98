"""The GPU catalog: names, label values and instance types -> the memory the engine really sees."""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import Any

from kvlint.lazy_re import lazy
from kvlint.record import record, replace

DATA = os.path.join(os.path.dirname(__file__), "data")


@record(frozen=True)
class GpuSpec:
    id: str
    name: str
    vendor: str
    engine_bytes: int | None  # torch total_memory (what vLLM calls total memory), or the smi total
    engine_bytes_source: str
    smi_total_mib: int | None
    compute_capability: tuple[int, int] | None
    bf16: bool | None
    fp8: bool | None
    nvidia_smi_name: str | None = None
    marketed: str | None = None
    mig_profile: str | None = None  # a MIG slice ("3g.40gb") of the card `parent`
    parent: str | None = None
    # what one device the engine sizes is called in messages ("GPU"; a TPU's JAX device: "chip", or
    # "TensorCore" where a chip shows two), and how many of them one requested unit gives (google.com/tpu 1
    # on a TPU v7x: 2 JAX devices)
    unit: str = "GPU"
    devices_per_unit: int = 1

    @property
    def cc_int(self) -> int | None:
        """Compute capability as vLLM compares it: 8.9 -> 89."""
        return (
            self.compute_capability[0] * 10 + self.compute_capability[1] if self.compute_capability else None
        )

    @property
    def pcie_card(self) -> bool:
        """The catalog's name says PCIe (A100 / H100 PCIe): cards joined at most in NVLink-bridged pairs, so more
        than two of them are never all NVLink-connected. Other cards' links are not recorded here."""
        return "pcie" in f"{self.name} {self.nvidia_smi_name or ''}".lower()

    @property
    def cc_text(self) -> str:
        return (
            f"{self.compute_capability[0]}.{self.compute_capability[1]}"
            if self.compute_capability
            else "unknown"
        )


_VENDOR = lazy(r"^(nvidia|amd|tesla|geforce)[\s_-]+")
_LINE = lazy(r"^(tesla|geforce)[\s_-]+")
_NOT_ALNUM = lazy(r"[^a-z0-9]")
_CC = lazy(r"\d+\.\d+")


def compact_name(text: str) -> str:
    """Normalise a GPU name for lookup: 'NVIDIA-H100-80GB-HBM3' and 'nvidia h100 80gb hbm3' agree.
    (Compiled patterns: the catalog's index calls this 200 times, and re.sub's look-up of a
    pattern given as text cost more than the substitutions.)"""
    t = text.strip().lower()
    t = _VENDOR().sub("", t)
    t = _LINE().sub("", t)
    t = t.replace("instinct", "").replace("_oam", "")
    return _NOT_ALNUM().sub("", t)


def _spec(entry: dict[str, Any]) -> GpuSpec:
    cc = entry.get("compute_capability")
    cc_t = None
    if isinstance(cc, str) and _CC().fullmatch(cc):
        major, minor = cc.split(".")
        cc_t = (int(major), int(minor))
    return GpuSpec(
        id=entry["id"],
        name=entry["name"],
        vendor=entry.get("vendor", "nvidia"),
        engine_bytes=entry.get("engine_bytes"),
        engine_bytes_source=entry.get("engine_bytes_source") or "",
        smi_total_mib=entry.get("smi_total_mib"),
        compute_capability=cc_t,
        bf16=entry.get("bf16"),
        fp8=entry.get("fp8"),
        nvidia_smi_name=entry.get("nvidia_smi_name"),
        marketed=entry.get("marketed_memory"),
        unit=entry.get("unit", "GPU"),
        devices_per_unit=entry.get("devices_per_unit", 1),
    )


_EXTRA_GPUS: list[dict[str, Any]] = []

# Names that several SKUs share: kvlint will not pick one, because the memory differs.
AMBIGUOUS = {
    "A100": ["a100-40gb-sxm", "a100-80gb-sxm", "a100-40gb-pcie", "a100-80gb-pcie"],
    "A100 PCIe": ["a100-40gb-pcie", "a100-80gb-pcie"],
    "V100": ["v100-16gb", "v100-32gb"],
    "RTX 6000": ["rtx-6000-ada", "rtx-pro-6000-blackwell-server"],
}


@lru_cache(maxsize=1)
def _ambiguous() -> dict[str, list[str]]:
    """AMBIGUOUS by compact name, made on first use (compact_name's expressions compile then, not at import)."""
    return {compact_name(name): ids for name, ids in AMBIGUOUS.items()}


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    with open(os.path.join(DATA, "gpus.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    data["gpus"] = list(data["gpus"]) + list(_EXTRA_GPUS)
    return data


def table(name: str) -> dict[str, Any]:
    """A lookup table shipped with the GPU catalog (kubeai_profiles, karpenter_gpu_by_memory)."""
    return _data().get(name, {})


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, GpuSpec], dict[str, str], dict[str, str]]:
    """(specs by id, compact name -> id, exact label value -> id)."""
    data = _data()
    by_id: dict[str, GpuSpec] = {}
    names: dict[str, str] = {}
    labels: dict[str, str] = {}
    for entry in data["gpus"]:
        spec = _spec(entry)
        by_id[spec.id] = spec
        keys = [entry["id"], entry["name"], entry.get("nvidia_smi_name") or "", *entry.get("aliases", [])]
        for key in keys:
            if key:
                names.setdefault(compact_name(key), spec.id)
        for values in (entry.get("labels") or {}).values():
            for value in values or []:
                labels.setdefault(value.lower(), spec.id)
    for label in data.get("label_values", []):
        labels.setdefault(label["value"].lower(), label["gpu"])
    return by_id, names, labels


def register_gpus(entries: list[dict[str, Any]]) -> None:
    """The GPUs the configuration adds (same schema as gpus.json entries); replaces any set before."""
    if not entries and not _EXTRA_GPUS:
        return
    _EXTRA_GPUS[:] = entries
    _data.cache_clear()
    _index.cache_clear()


def slice_spec(parent_id: str, profile: str) -> GpuSpec | None:
    """A MIG slice as a GPU of its own: id `parent:profile`, the slice's memory, the parent's features."""
    from kvlint.catalog import mig

    parent = _index()[0].get(parent_id)
    prof = mig.normalise(profile)
    found = mig.slice_memory(parent_id, profile) if parent is not None else None
    if parent is None or found is None or prof is None:
        return None
    memory, source = found
    return replace(
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


def smallest_slice(profile: str) -> tuple[GpuSpec | None, list[str]]:
    """The slice with the least memory among the cards that offer the profile (what is guaranteed
    when the file does not say which card is partitioned), and the card ids considered."""
    from kvlint.catalog import mig

    parents = mig.parents_offering(profile)
    specs = [s for s in (slice_spec(p, profile) for p in parents) if s is not None]
    if not specs:
        return None, parents
    return min(specs, key=lambda s: s.engine_bytes or 0), parents


def by_id(gpu_id: str) -> GpuSpec | None:
    spec = _index()[0].get(gpu_id)
    if spec is None and gpu_id.startswith("tpu-"):  # a TPU chip (catalog/tpus.py)
        from kvlint.catalog import tpus

        chip = tpus.entry(gpu_id)
        return _spec(chip) if chip else None
    if spec is None and ":" in gpu_id:
        card, _, profile = gpu_id.partition(":")
        return slice_spec(card, profile)
    return spec


def lookup(name: str) -> GpuSpec | None:
    """A GPU by id, alias, nvidia-smi name or Kubernetes label value; None if unknown or ambiguous.

    Label values match exactly (GKE's `nvidia-tesla-a100` is the 40 GB card); free-form names are
    normalised, and a name several cards share (`A100`) matches none."""
    ids, names, labels = _index()
    if "gb" in name.lower() and ("mig" in name.lower() or ":" in name):
        # a MIG slice: 'a100-80gb:3g.40gb', 'NVIDIA-A100-SXM4-80GB-MIG-1g.10gb' (GFD, single strategy)
        from kvlint.catalog import mig

        parts = mig.split(name)
        if parts is not None:
            card = lookup(parts[0])
            return slice_spec(card.id, parts[1]) if card is not None else None
    raw = name.strip().lower()
    if raw in labels:
        return ids.get(labels[raw])
    if raw.startswith("tpu-"):  # a TPU chip by its catalog id (catalog/tpus.py)
        return by_id(raw)
    key = compact_name(name)
    if key in _ambiguous():
        return None
    gid = names.get(key)
    return ids.get(gid) if gid else None


def ambiguous(name: str) -> list[str]:
    return _ambiguous().get(compact_name(name), [])


def suggest(name: str, limit: int = 3) -> list[str]:
    import difflib

    _, names, _ = _index()
    key = compact_name(name)
    close = difflib.get_close_matches(key, list(names), n=limit * 3, cutoff=0.6)
    out: list[str] = []
    for c in close:
        if names[c] not in out:
            out.append(names[c])
    return out[:limit]


def instances() -> list[dict[str, Any]]:
    """The catalogued instance types: {cloud, type, gpu, count, source}."""
    return list(_data().get("instances", []))


def labels_of(gpu_id: str) -> list[tuple[str, str]]:
    """The node-label (key, value) pairs that name a GPU in the catalog."""
    out: list[tuple[str, str]] = []
    for entry in _data()["gpus"]:
        if entry["id"] == gpu_id:
            for key, values in (entry.get("labels") or {}).items():
                out.extend((key, v) for v in values or [])
    return out


def instance(instance_type: str) -> tuple[GpuSpec, int, str] | None:
    """An instance type (p5.48xlarge, a3-highgpu-8g, Standard_ND96isr_H100_v5) -> (GPU, count, source)."""
    key = instance_type.strip().lower()
    for item in _data().get("instances", []):
        if str(item["type"]).lower() == key:
            spec = by_id(item["gpu"])
            if spec is not None:
                return spec, int(item["count"]), item.get("source", "")
    return None


def label_gpu(key: str, value: str) -> GpuSpec | None:
    """A GPU from one node label (key, value)."""
    ids, _, labels = _index()
    gid = labels.get(value.strip().lower())
    if gid and "-mig-" not in value.lower():
        return ids.get(gid)
    return lookup(value)


REAL_LABEL_KEYS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator")


@lru_cache(maxsize=4)
def real_label_values(key: str) -> frozenset[str]:
    """Values of a node label that real nodes carry: sourced label values, and for
    nvidia.com/gpu.product the nvidia-smi name with spaces as '-' (GPU feature discovery)."""
    data = _data()
    out: set[str] = set()
    for entry in data["gpus"]:
        out.update((entry.get("labels") or {}).get(key) or [])
        if key == "nvidia.com/gpu.product" and entry.get("nvidia_smi_name"):
            out.add(str(entry["nvidia_smi_name"]).replace(" ", "-"))
    out.update(lv["value"] for lv in data.get("label_values", []) if lv.get("key") == key)
    return frozenset(out)


def label_carried(key: str, value: str) -> bool:
    """True when some real node carries key=value (GFD adds -SHARED and -MIG-<profile> suffixes)."""
    real = real_label_values(key)
    base = value.strip()
    if "-SHARED" in base or "-MIG-" in base:  # the only suffixes the expression strips
        base = re.sub(r"-(SHARED|MIG-\dg\.\d+gb(\+me)?)$", "", base)
    return value.strip() in real or base in real


def closest_label_values(key: str, value: str, limit: int = 2) -> list[str]:
    """The real values nearest to a value no node carries, preferring the same GPU model (H100, L4)."""
    import difflib

    real = sorted(real_label_values(key))
    model = re.search(r"[a-z]{1,2}\d{1,4}[a-z]?", value.lower().replace("nvidia", "").replace("tesla", ""))
    same = [v for v in real if model and model.group(0) in v.lower()]
    pool = same or real
    close = difflib.get_close_matches(value, pool, n=limit, cutoff=0.0 if same else 0.6)
    return close
