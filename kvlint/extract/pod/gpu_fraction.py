"""A share of one GPU asked for by annotation: KAI Scheduler's `gpu-fraction` and `gpu-memory`.

NVIDIA/KAI-Scheduler@82d69adb docs/gpu-sharing/README.md (the scheduler Run:ai's GPU fractions came
from): a pod annotated `gpu-fraction: "0.5"` "is allowed to consume up to half of a GPU device memory";
one annotated `gpu-memory: "2000"` (MiB) "up to 2000 Mib of a GPU device memory". The pod requests no
`nvidia.com/gpu` (docs/gpu-sharing/gpu-sharing.yaml: the annotation, `schedulerName: kai-scheduler`).
"KAI Scheduler does not enforce memory allocation limit or performs memory isolation between
processes": the engine sees the whole card and must itself stay within its share.

Such a pod runs on one shared GPU, not on none. kvlint plans it on the whole card (the engine's own
memory fraction decides its pool there), records the share (`gpu_share`: the fraction of the card's
memory; `gpu_share_bytes`: what a `gpu-memory` annotation gives), and KV208 checks the engine's fraction
in force against it (a share in bytes once the card, and so its memory, is known). The pods that may share the card are added up by link/sharing.py.

Alibaba Cloud's GPU sharing asks by resource: `aliyun.com/gpu-mem: 4` is 4 GiB of one GPU
(AliyunContainerService/gpushare-device-plugin@45fb8b88 cmd/nvidia/main.go:18: `--memory-unit` GiB by
default, MiB where the node's plugin is started so). The open-source plugin and its scheduler extender
only schedule ("cannot in any measure enforce that at the runtime level",
AliyunContainerService/gpushare-scheduler-extender@c0b61411 docs/userguide.md:3-5); ACK's cGPU kernel module isolates it on nodes that run it (the same plugin hands the
share to the container as ALIYUN_COM_GPU_MEM_CONTAINER and turns isolation off with CGPU_DISABLE,
pkg/gpu/nvidia/allocate.go:113-126). Which one a node runs, and its unit, the pod does not say: the share
is taken as KAI's (the whole card, the engine's fraction checked against the share), its note saying so.
"""

from __future__ import annotations

import math

from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.pod import vgpu
from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Scalar

SOURCE = "NVIDIA/KAI-Scheduler@82d69adb docs/gpu-sharing/README.md"
GPUSHARE = "AliyunContainerService/gpushare-device-plugin@45fb8b88 cmd/nvidia/main.go:18"
GPU_MEM = "aliyun.com/gpu-mem"
# where a workload's pod annotations are: the pod template's, else the object's own (a bare Pod)
_ANNOTATIONS = (("spec", "template", "metadata", "annotations"), ("metadata", "annotations"))


def read(d: Deployment, root: Mapping, container: Mapping, path: str) -> None:
    """The share a pod that requests no GPU resource asks for by annotation or aliyun.com/gpu-mem, if any."""
    if d.gpus_per_pod is not None or "gpus_per_pod" in d.unreadable:
        return
    node = vgpu.asked(container, GPU_MEM)
    if node is not None:
        _share(d, GPU_MEM, "GiB", node, path)
        return
    for keys in _ANNOTATIONS:
        ann = root.at(*keys)
        if not isinstance(ann, Mapping):
            continue
        for key, unit in (("gpu-fraction", ""), ("gpu-memory", "MiB")):
            node = ann.scalar(key)
            if node is not None:
                _share(d, key, unit, node, path)
                return


def _share(d: Deployment, key: str, unit: str, node: Scalar, path: str) -> None:
    where = node.where(path)
    try:
        share = float(str(node.value).strip())
    except ValueError:
        share = math.nan
    whole = share.is_integer() if math.isfinite(share) else False
    ok = 0 < share <= 1 if not unit else share > 0 and whole
    source = GPUSHARE if key == GPU_MEM else SOURCE
    if not ok:
        wanted = "a fraction of one GPU in (0, 1]" if not unit else f"a whole number of {unit}"
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"{d.label()}: cannot read {key} {node.text!r} as {wanted} ({source}); the GPU share is unknown",
                where,
            )
        )
        d.unreadable.append("gpus_per_pod")
        return
    shown = f"{share:g}" if not unit else f"{int(share):,} {unit}"
    how = (
        "Alibaba GPU sharing: GiB unless the node's plugin counts MiB, memory isolated only where the node runs cGPU"
        if key == GPU_MEM
        else "KAI Scheduler GPU sharing, no memory isolation"
    )
    note = f"{key} {shown}: a share of one GPU ({how}; {source})"
    d.gpus_per_pod = inferred(1, note, where)
    d.gpu_shared = stated(True, where, note)
    if unit:
        d.gpu_share_bytes = stated(int(share) * (2**30 if unit == "GiB" else 2**20), where, note)
    else:
        d.gpu_share = stated(share, where, note)
