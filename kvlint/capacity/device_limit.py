"""The GPU an engine sees under an enforced cap on its memory (HAMi / Volcano vGPU, extract/pod/vgpu.py).

HAMi-core reports the cap as the device's total (cuDeviceTotalMem_v2) and min(cap, card) to
cuMemGetInfo_v2 (Project-HAMi/HAMi-core@8f3a89c6 src/cuda/device.c:90-96, src/cuda/memory.c:486-513), so
the engine's memory fraction applies to the cap: the card is planned as a device of that memory, each
of the pod's GPUs alike (one CUDA_DEVICE_MEMORY_LIMIT_i per GPU). A percentage is of the card's NVML
total in MiB, in whole MiB (Project-HAMi/HAMi@v2.10.0 pkg/device/nvidia/device.go:780-783:
`dev.Totalmem * k.MemPercentagereq / 100`, Totalmem from register.go:148). A cap larger than the card
fits no card: the scheduler skips every card with less free memory than asked (device.go:789-793,
CardInsufficientMemory) and the pod stays Pending (under the chart's deviceMemoryScaling 1).
"""

from __future__ import annotations

from kvlint.catalog.gpus import GpuSpec
from kvlint.codes import UNKNOWN_GPU
from kvlint.deployment import Deployment
from kvlint.findings import Issue
from kvlint.record import replace

MIB = 2**20
SEEN = "Project-HAMi/HAMi-core@8f3a89c6 src/cuda/device.c:90-96, src/cuda/memory.c:486-513"
PENDING = "Project-HAMi/HAMi@v2.10.0 pkg/device/nvidia/device.go:789-793"


def limited(gpu: GpuSpec, d: Deployment) -> tuple[GpuSpec | None, Issue | None]:
    """The GPU as the engine sees it under the deployment's cap (the card itself without one), or
    (None, the KV002 saying so) when the cap is more memory than the card has."""
    cap = d.gpu_limit_bytes or d.gpu_limit_share
    if cap is None or not gpu.engine_bytes:
        return gpu, None
    card_mib = gpu.smi_total_mib or gpu.engine_bytes // MIB
    if d.gpu_limit_bytes is not None:
        cap_mib = int(d.gpu_limit_bytes.value) // MIB
    else:
        cap_mib = int(card_mib * round(float(cap.value) * 100)) // 100
    if cap_mib > card_mib:
        return None, Issue(
            UNKNOWN_GPU,
            f"{d.label()}: {cap.note}, more than the {card_mib:,} MiB of {gpu.name}: no such card has that much "
            f"free memory, so the scheduler places the pod on none and it stays Pending ({PENDING})",
            cap.where or d.where,
            fix=f"ask for at most {card_mib:,} MiB per GPU, or run on a larger card",
        )
    return (
        replace(
            gpu,
            name=f"{gpu.name} [{cap.note}]",
            engine_bytes=min(cap_mib * MIB, gpu.engine_bytes),
            engine_bytes_source=f"{cap.note}, which the engine sees as the device's total ({SEEN})",
            smi_total_mib=cap_mib,
        ),
        None,
    )
