"""Google TPU chips as devices kvlint plans on: one JAX device per chip, with the HBM JAX reports for it.

vLLM on TPU (the tpu-inference plugin) sizes its KV cache from `jax.Device.memory_stats()["bytes_limit"]`
summed over the devices it runs on (vllm-project/tpu-inference@v0.27.0 tpu_inference/utils.py:123-150
hbm_usage_bytes, tpu_inference/worker/tpu_worker.py:511-520 determine_available_memory), so a chip's
`engine_bytes` here is that bytes_limit, not the marketed HBM, as real logs show it (the worker's
"Init model | hbm=[(used, limit), ...]GiB", two decimals). Only chips whose bytes_limit a real log shows are
planned on.

One JAX device is what the engine sizes (and what --tensor-parallel-size counts): a whole chip on v5e and v6e
(one TensorCore) and on v5p (two TensorCores run as one megacore device), but one TensorCore on TPU7x, whose
chip shows two devices of half its HBM each ("Each TPU7x chip contains two TensorCores", "HBM capacity per chip
(GiB) 95 | 32 | 192" for v5p | v6e | TPU7x, "The Ironwood programming model lets you access two TPU devices
instead of the single logical core (megacore)": https://docs.cloud.google.com/tpu/docs/tpu7x;
vllm-project/tpu-inference@v0.27.0 tpu_inference/utils.py:193-196 "each JAX device (v7x core) has 1/2 of the
total chip HBM"). `google.com/tpu` counts chips, so on TPU7x one requested chip is two devices
(`devices_per_unit`), and messages say "per TensorCore" there, "per chip" elsewhere (`unit`).

When memory_stats is not there to read (Pathways), tpu-inference takes a fixed limit per device instead:
v5p 95 GiB, v5e 16, v6e 32, v7x 96 (tpu_inference/utils.py:184-201 get_device_hbm_limit, used by
pathways_hbm_usage_gb :205-208); the older torch_xla worker (vllm v0.10.0-v0.12.0 vllm/v1/worker/tpu_worker.py,
e.g. vllm==0.11.0 :213-224) took tpu_info's chip total_memory under SPMD and xm.get_memory_info's bytes_limit
otherwise. kvlint plans the JAX worker reading memory_stats, the path the vllm/vllm-tpu image runs.

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
    "tpu-v5p": {
        "name": "Google TPU v5p",
        # SachinKonan/SkyRLTpu@4e014ea tpu/muse_glimmer/E2E.md:201-202, vllm-tpu 0.23.0 on a v5p-8 (4 chips,
        # TP 4): "HBM per chip, before load | 0.00 / 95.74 GiB", model resident "13.06 / 95.74 GiB (x4 chips)"
        # (the worker's hbm= pairs); Google lists 95 GiB of HBM per v5p chip
        "bytes": 102_800_042_230,  # 95.74 GiB, as logged to 0.01 GiB
        "source": "JAX bytes_limit of a TPU v5p chip as tpu-inference logs it (hbm= 95.74 GiB per chip on a v5p-8: "
        "SachinKonan/SkyRLTpu tpu/muse_glimmer/E2E.md:201-202)",
    },
    "tpu-v7x": {
        "name": "Google TPU7x (Ironwood)",
        # yangwhale/gpu-tpu-pedia@3fa9ce1 tpu/tpu-inference/Kimi-K2.6-1T-A32B-INT4/README.md:217 "[tpu_runner.py:602]
        # Init model | hbm=[(51.08, 94.75), ...]GiB" (TP 16 on 8 chips); Qwen3.5-397B-A17B-FP8/README.en.md:625
        # "Init worker | rank=0 | hbm=[(0.0, 94.75), ...] x 16"; GLM-5.1-754B-FP4/README.en.md:491 "4 chips x 192
        # GB raw HBM = 768 GB, but each device exposes 94.75 GB"
        "bytes": 101_737_037_824,  # 94.75 GiB per TensorCore, as logged to 0.01 GiB
        "source": "JAX bytes_limit of one TPU7x TensorCore (half a chip) as tpu-inference logs it (hbm= 94.75 GiB "
        "per device: yangwhale/gpu-tpu-pedia tpu/tpu-inference/Kimi-K2.6-1T-A32B-INT4/README.md:217)",
        "unit": "TensorCore",
        "devices_per_unit": 2,
    },
    # known by its label so the KV004 can name it and say why it is not planned
    "tpu-v4": {
        "name": "Google TPU v4",
        "bytes": None,
        "source": "",
        "why": "tpu-inference lists v4 as experimental (vllm-project/tpu-inference@v0.27.0 README.md:62-64) and no "
        "public log shows the bytes_limit JAX reports for a v4 chip; Google's 32 GiB of HBM per chip "
        "(https://cloud.google.com/tpu/docs/v4) is not it (JAX gives 31.25 GiB of a v6e's 32, 15.75 of a v5e's 16)",
    },
}

# cloud.google.com/gke-tpu-accelerator values (GKE "Plan TPUs in GKE": tpu-v5-lite-podslice and the older
# single-host tpu-v5-lite-device are v5e; tpu-v5p-slice; tpu-v6e-slice; tpu7x; tpu-v4-podslice)
GKE_ACCELERATORS = {
    "tpu-v4-podslice": "tpu-v4",
    "tpu-v5-lite-podslice": "tpu-v5e",
    "tpu-v5-lite-device": "tpu-v5e",
    "tpu-v5p-slice": "tpu-v5p",
    "tpu-v6e-slice": "tpu-v6e",
    "tpu7x": "tpu-v7x",
}


# The chips one node (TPU VM) of a slice has where Google's configuration tables say: (chips of the largest
# single-host slice, chips of each VM of a multi-host slice, that VM's machine type, the table)
_NODES = {
    # "2x4 | 8 | 1 | 1 | ct6e-standard-8t | Single-host"; "4x4 | 16 | 2 | 4 | ct6e-standard-4t | Multi-host" and
    # every larger shape on ct6e-standard-4t
    "tpu-v6e": (8, 4, "ct6e-standard-4t", "https://cloud.google.com/tpu/docs/v6e"),
    # "2x2x1 | 8 | 4 | 1 | N/A | ct5p-hightpu-4t"; every shape on ct5p-hightpu-4t, one host per 4 chips
    "tpu-v5p": (4, 4, "ct5p-hightpu-4t", "https://cloud.google.com/tpu/docs/v5p"),
}


def node_chips(chip_id: str, topology: str) -> tuple[int, str] | None:
    """The most chips one node of a `cloud.google.com/gke-tpu-topology` slice has, and how that is said: the
    slice's own chips, or one VM's where the slice is multi-host and Google's table says its VMs; None when the
    topology cannot be read."""
    n = topology_chips(topology)
    if n is None:
        return None
    said = f"topology {topology} is a slice of {' x '.join(topology.strip().lower().split('x'))} = {n} chips"
    node = _NODES.get(chip_id)
    if node is None or n <= node[0]:
        return n, said
    return node[1], f"{said} on VMs of {node[1]} ({node[2]}: {node[3]})"


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
        "unit": chip.get("unit", "chip"),
        "devices_per_unit": chip.get("devices_per_unit", 1),
    }


def not_planned_why(chip_id: str) -> str:
    """Why a chip kvlint knows by its label is not planned on (no bytes_limit from a real log), or ''."""
    return str(_CHIPS.get(chip_id, {}).get("why", ""))


def planned() -> str:
    """The chips whose bytes_limit kvlint knows, as messages list them, by generation: "v5e, v5p, v6e and TPU7x"."""
    names = [
        c["name"].removeprefix("Google TPU ").removeprefix("Google ").split(" (")[0]
        for c in _CHIPS.values()
        if c["bytes"]
    ]
    names.sort(key=lambda n: n.lower().removeprefix("tpu").removeprefix("v"))
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


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
