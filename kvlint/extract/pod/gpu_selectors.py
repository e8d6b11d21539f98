"""GPU type (and sometimes count) from the labels a workload selects nodes by.

nvidia.com/gpu.product (GPU feature discovery), cloud.google.com/gke-accelerator, the instance-type
labels (AWS, GCP, Azure types -> model and count), karpenter.k8s.aws/instance-gpu-name (with
instance-gpu-memory where the name alone is ambiguous), Volcengine's gpu-name, AMD's product name.
TPU and Neuron selectors mark the workload as not a GPU one.

Why this reads the GPU catalog during extract (resolve looks the chosen card up once more): a workload that
allows several node types is planned on the smallest card, so `choose` needs each candidate's memory; and
what a label value means is the catalog's knowledge (a GPU feature-discovery product name, an instance type's
GPUs and count, Karpenter's name + memory pair), so the chosen card is recorded by its catalog id. The
passes after it read that card before resolve runs: a MIG slice is a slice of it (gpu_sharing.py), DRA
claims keep the candidates on it (link/claims.py), node pools are given only to a workload without one
(link/pools.py). Moving the choice into resolve means moving those three with it.
`labels_no_node_carries` asks the catalog which values real nodes carry, for its warning only.
"""

from __future__ import annotations

from kvlint.catalog import gpus as catalog
from kvlint.catalog import tpus
from kvlint.catalog.gpus import GpuSpec
from kvlint.codes import UNKNOWN_GPU
from kvlint.findings import Issue, Location, Severity
from kvlint.record import record

GPU_KEYS = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
    "machine.cluster.vke.volcengine.com/gpu-name",
    "amd.com/gpu.product-name",
    "nvidia.com/gpu.machine",
)
INSTANCE_KEYS = (
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-type",
)
TPU_KEYS = ("cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-tpu-topology")


@record
class GpuChoice:
    label: str  # the value as written (what Deployment.gpu states)
    spec: GpuSpec | None
    count: int | None  # GPUs an instance type brings
    where: Location
    note: str  # how it was inferred


def choose(labels: list[tuple[str, list[str], Location]]) -> tuple[GpuChoice | None, str | None]:
    """(the GPU the labels select, or None; the accelerator kind when it is not a GPU)."""
    mem = {k: v for k, v, _ in labels}
    for key, _values, _where in labels:
        if key in TPU_KEYS:
            return _tpu_chip(labels), "tpu"
        if "neuron" in key:
            return None, "neuron"
    candidates: list[GpuChoice] = []
    for key, values, where in labels:
        if key in GPU_KEYS:
            for value in values:
                if key == "karpenter.k8s.aws/instance-gpu-name":
                    spec = _karpenter(value, mem.get("karpenter.k8s.aws/instance-gpu-memory"))
                else:
                    spec = catalog.label_gpu(key, value)
                candidates.append(GpuChoice(value, spec, None, where, f"from node label {key}={value}"))
        elif key in INSTANCE_KEYS:
            for value in values:
                hit = catalog.instance(value)
                if hit is not None:
                    spec, count, _src = hit
                    candidates.append(
                        GpuChoice(value, spec, count, where, f"instance type {value}: {count} x {spec.name}")
                    )
                else:
                    candidates.append(
                        GpuChoice(value, None, None, where, f"instance type {value} (not in the catalog)")
                    )
    if not candidates:
        return None, None
    known = [c for c in candidates if c.spec is not None and c.spec.engine_bytes]
    if known:
        # Several allowed node types: the smallest card decides what is guaranteed to fit.
        best = min(known, key=lambda c: c.spec.engine_bytes)  # type: ignore[arg-type, return-value, union-attr]
        if len({c.spec.id for c in known}) > 1:  # type: ignore[union-attr]
            best.note += f" (smallest of {len(known)} allowed GPU types)"
        return best, None
    return candidates[0], None


def _tpu_chip(labels: list[tuple[str, list[str], Location]]) -> GpuChoice | None:
    """The TPU chip `cloud.google.com/gke-tpu-accelerator` names (catalog/tpus.py), with the topology's chip
    count in the note; None when the label is absent or names no chip kvlint knows."""
    for key, values, where in labels:
        if key == TPU_KEYS[0] and values:
            chip = tpus.chip_of_label(values[0])
            spec = catalog.by_id(chip) if chip else None
            if spec is None:
                return None
            topo = next((v[0] for k, v, _ in labels if k == TPU_KEYS[1] and v), None)
            shape = f", topology {topo}" if topo else ""
            return GpuChoice(values[0], spec, None, where, f"from node label {key}={values[0]}{shape}")
    return None


def _karpenter(name: str, memory: list[str] | None) -> GpuSpec | None:
    by_mem = catalog.table("karpenter_gpu_by_memory").get(name.lower())
    if by_mem:
        for m in memory or []:
            if m in by_mem:
                return catalog.by_id(by_mem[m])
        return None
    return catalog.lookup(name)


def kubeai_profile(profile: str) -> tuple[GpuSpec | None, int | None, str]:
    """KubeAI `resourceProfile: nvidia-gpu-l4:8` -> (GPU, 8, note)."""
    name, _, count = profile.partition(":")
    gid = catalog.table("kubeai_profiles").get(name)
    spec = catalog.by_id(gid) if gid else None
    try:
        n = int(count) if count else None  # no count: the controller rejects the profile (kubeai_keys)
    except ValueError:
        n = None
    return spec, n, f"KubeAI resourceProfile {profile}"


def labels_no_node_carries(labels: list[tuple[str, list[str], Location]]) -> list[Issue]:
    """A GPU node-label value no real node carries: the pod stays Pending. A warning naming the
    closest real values, never a silent alias."""
    out: list[Issue] = []
    for key, values, where in labels:
        if key not in catalog.REAL_LABEL_KEYS:
            continue
        for value in values:
            if catalog.label_carried(key, value):
                continue
            close = catalog.closest_label_values(key, value)
            spec = catalog.lookup(value)
            assumed = f"; kvlint checks capacity on {spec.name}, as if the label named it" if spec else ""
            out.append(
                Issue(
                    UNKNOWN_GPU,
                    f"no node carries {key}={value}: the pod stays Pending"
                    + (
                        f" (closest real value{'s' if len(close) > 1 else ''}: {', '.join(close)})"
                        if close
                        else ""
                    )
                    + assumed,
                    where,
                    fix=f"use {close[0]}"
                    if close
                    else "use the value the node's labels show (kubectl get nodes --show-labels)",
                    severity=Severity.WARNING,
                )
            )
    return out
