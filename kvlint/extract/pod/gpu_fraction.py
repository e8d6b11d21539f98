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
"""

from __future__ import annotations

import math

from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Scalar

SOURCE = "NVIDIA/KAI-Scheduler@82d69adb docs/gpu-sharing/README.md"
# where a workload's pod annotations are: the pod template's, else the object's own (a bare Pod)
_ANNOTATIONS = (("spec", "template", "metadata", "annotations"), ("metadata", "annotations"))


def read(d: Deployment, root: Mapping, path: str) -> None:
    """The share a pod that requests no GPU resource asks for by annotation, if any."""
    if d.gpus_per_pod is not None or "gpus_per_pod" in d.unreadable:
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
    if not ok:
        wanted = "a fraction of one GPU in (0, 1]" if not unit else "a whole number of MiB"
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"{d.label()}: cannot read {key} {node.text!r} as {wanted} ({SOURCE}); the GPU share is unknown",
                where,
            )
        )
        d.unreadable.append("gpus_per_pod")
        return
    shown = f"{share:g}" if not unit else f"{int(share):,} {unit}"
    note = f"{key} {shown}: a share of one GPU (KAI Scheduler GPU sharing, no memory isolation; {SOURCE})"
    d.gpus_per_pod = inferred(1, note, where)
    d.gpu_shared = stated(True, where, note)
    if unit:
        d.gpu_share_bytes = stated(int(share) * 2**20, where, note)
    else:
        d.gpu_share = stated(share, where, note)
