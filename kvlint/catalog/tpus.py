"""Google TPU chips as devices kvlint plans on: one JAX device per chip, with the HBM JAX reports for it.

vLLM on TPU (the tpu-inference plugin) sizes its KV cache from `jax.Device.memory_stats()["bytes_limit"]`
summed over the devices it runs on (vllm-project/tpu-inference@v0.27.0 tpu_inference/utils.py:123-150
hbm_usage_bytes, tpu_inference/worker/tpu_worker.py:511-520 determine_available_memory), so a chip's
`engine_bytes` here is that bytes_limit, not the marketed HBM. Only chips whose bytes_limit a real log shows
are planned on; the others (v5p, v7x) are known by their GKE label so the KV004 can name them.

GKE labels a TPU node `cloud.google.com/gke-tpu-accelerator` (tpu-v5-lite-podslice, tpu-v5p-slice,
tpu-v6e-slice, tpu7x) and `cloud.google.com/gke-tpu-topology` (2x4, 4x4, 2x2x2); a pod requests its chips as
`google.com/tpu` (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus, "TPU versions and
topologies" and "Plan your TPU configuration").
"""

from __future__ import annotations

from typing import Any

VENDOR = "google"

_CHIPS: dict[str, dict] = {
    "tpu-v6e": {
        "name": "Google TPU v6e (Trillium)",
        # vllm-project/vllm PR #16211 (usage stats on TPU, 2025-04-25): "gpu_type": "v6e",
        # "gpu_memory_per_device": 33550237696 (torch_xla's bytes_limit); tpu-inference PR #145's log shows
        # the same chip as hbm=[(3.74, 31.25), ...] GiB (33550237696 / 2^30 = 31.246)
        "bytes": 33_550_237_696,
        "source": "jax/torch_xla bytes_limit of a TPU v6e: vllm-project/vllm PR #16211 usage report "
        "(gpu_memory_per_device 33550237696), 31.25 GiB in vllm-project/tpu-inference PR #145's log",
    },
    "tpu-v5e": {
        "name": "Google TPU v5e",
        # jax Device.memory_stats() on a TPU v5e-8 (a public Kaggle notebook, find_string
        # "'bytes_limit': 16909332480"): 'bytes_limit': 16909332480 (15.75 GiB of the 16 GiB HBM)
        "bytes": 16_909_332_480,
        "source": "jax memory_stats bytes_limit on a TPU v5e-8 (a public Kaggle notebook: 'bytes_limit': "
        "16909332480)",
    },
    "tpu-v5p": {"name": "Google TPU v5p", "bytes": None, "source": ""},
    "tpu-v7x": {"name": "Google TPU v7x (Ironwood)", "bytes": None, "source": ""},
}

# cloud.google.com/gke-tpu-accelerator values (GKE "Plan TPUs in GKE": tpu-v5-lite-podslice and the older
# single-host tpu-v5-lite-device are v5e; tpu-v5p-slice; tpu-v6e-slice; tpu7x)
GKE_ACCELERATORS = {
    "tpu-v5-lite-podslice": "tpu-v5e",
    "tpu-v5-lite-device": "tpu-v5e",
    "tpu-v5p-slice": "tpu-v5p",
    "tpu-v6e-slice": "tpu-v6e",
    "tpu7x": "tpu-v7x",
}


def entry(chip_id: str) -> dict[str, Any] | None:
    """A chip as a GPU catalog entry (catalog/gpus.py builds its GpuSpec): the HBM JAX reports, bf16."""
    chip = _CHIPS.get(chip_id)
    if chip is None:
        return None
    return {
        "id": chip_id,
        "name": chip["name"],
        "vendor": VENDOR,
        "engine_bytes": chip["bytes"],
        "engine_bytes_source": chip["source"],
        "bf16": True,
    }


def chip_of_label(value: str) -> str | None:
    """The chip id a `cloud.google.com/gke-tpu-accelerator` value names, or None."""
    return GKE_ACCELERATORS.get(value.strip().lower())


def is_tpu(spec: Any) -> bool:
    """A catalog GpuSpec that is a TPU chip."""
    return spec is not None and spec.vendor == VENDOR


def topology_chips(topology: str) -> int | None:
    """Chips of a `cloud.google.com/gke-tpu-topology` value: the product of its dimensions (4x4 -> 16)."""
    parts = topology.strip().lower().split("x")
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        return None
    n = 1
    for p in parts:
        n *= int(p)
    return n
