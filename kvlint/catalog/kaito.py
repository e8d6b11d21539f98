"""KAITO's preset catalog: a preset name (a Workspace's inference.preset.name, a preset image's name)
-> the Hugging Face model it serves, as KAITO's own catalog records it (data/kaito_presets.json,
taken from kaito-project/kaito presets/workspace/models/supported_models.yaml, with its commit)."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

DATA = os.path.join(os.path.dirname(__file__), "data", "kaito_presets.json")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)


def hf_id(preset: str) -> str | None:
    """The Hugging Face id of a KAITO preset (case-insensitive), or None when KAITO lists none."""
    return _data()["presets"].get(preset.strip().lower())


def source() -> str:
    return str(_data()["source"])


# --- what KAITO's operator decides from its own catalog (kaito-project/kaito@056b828) ------------------
# pkg/workspace/estimator/nodesestimator/estimator.go constants
ESTIMATOR_UTILIZATION = 0.84
WEIGHT_EXPANSION = 1.02
BASE_OVERHEAD_GIB = 2.3
OVERHEAD_WEIGHT_FACTOR = 0.05
DEFAULT_CONTEXT = 2048
_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def quantity(text: str) -> float | None:
    """A Kubernetes quantity ("641.30Gi", "188Gi") in bytes."""
    for suffix in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(suffix):
            try:
                return float(text[: -len(suffix)]) * _UNITS[suffix]
            except ValueError:
                return None
    try:
        return float(text)
    except ValueError:
        return None


def model_facts(hf: str) -> dict[str, Any] | None:
    """KAITO's model catalog entry (modelFileSize and attention shape) for a Hub id."""
    return _data().get("models", {}).get(hf)


def sku(name: str) -> dict[str, Any] | None:
    """KAITO's SKU entry (GPUCount, GPUMem = the node's total GPU memory) for a VM type."""
    return _data().get("skus", {}).get(name)


def bytes_per_token(m: dict[str, Any]) -> int:
    """presets/workspace/generator/generator.go calculateKVCacheTokenSize: fp16 K+V per token (MLA latent)."""
    heads, kv = int(m.get("heads", 0)), int(m.get("kv_heads", 0) or m.get("heads", 0))
    head_dim = int(m.get("head_dim", 0)) or (int(m.get("hidden", 0)) // heads if heads else 0)
    if "kv_lora_rank" in m:
        per_layer = int(m["kv_lora_rank"]) + int(m.get("qk_rope_head_dim", 0))
    else:
        per_layer = 2 * kv * head_dim
    return per_layer * int(m.get("layers", 0)) * 2


def estimate_nodes(m: dict[str, Any], node: dict[str, Any], context: int = DEFAULT_CONTEXT) -> int | None:
    """nodesestimator.EstimateNodeCount: GPU nodes per replica for the model on this VM type (None: KAITO fails)."""
    size, mem, gpus = quantity(str(m["file_size"])), quantity(str(node["gpu_mem"])), int(node["gpus"])
    if size is None or mem is None or gpus <= 0:
        return None
    avail = mem / gpus * ESTIMATOR_UTILIZATION
    reserve = BASE_OVERHEAD_GIB * 2**30 + context * bytes_per_token(m) / gpus
    if avail <= reserve:
        return None
    per_gpu = (avail - reserve) / (1 + OVERHEAD_WEIGHT_FACTOR)
    min_gpus = int(size * WEIGHT_EXPANSION / per_gpu) + 1
    return (min_gpus + gpus - 1) // gpus


def fits_half_gpu(m: dict[str, Any], node: dict[str, Any]) -> bool:
    """pkg/model/interface.go modelFitsOnSingleGPU: file size < half of one GPU (multi-GPU nodes only)."""
    size, mem, gpus = quantity(str(m["file_size"])), quantity(str(node["gpu_mem"])), int(node["gpus"])
    return size is not None and mem is not None and gpus > 1 and size * gpus * 2 < mem
