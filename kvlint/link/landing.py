"""Whether a workload lands on a node pool: its node-label terms met by the labels the pool's nodes
carry (or may carry), and each NoSchedule / NoExecute taint of the pool tolerated (link/pools.py
module docstring). Admission may add labels and tolerations first (link/admission.py): with
variants, the workload lands on each pool some variant lands it on.

Labels a node carries whatever the pool: `kubernetes.io/`, `topology.kubernetes.io/` and
`beta.kubernetes.io/` well-known labels (Kubernetes "Well-Known Labels, Annotations and Taints");
Karpenter's own labels on a Karpenter pool's nodes; `nvidia.com/gpu.present=true` on every node
with an NVIDIA GPU, which the NVIDIA GPU Operator sets from Node Feature Discovery (GPU Operator
docs, "GPU Feature Discovery"; its operands are scheduled on it): met by a pool that may carry GPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.catalog import gpus as catalog
from kvlint.deployment import Deployment
from kvlint.extract.kinds.node_pools import COMPUTE_CLASS, Pool
from kvlint.extract.pod import gpu_selectors

if TYPE_CHECKING:
    from kvlint.link.admission import Variant

GPU_PRESENT = "nvidia.com/gpu.present"


def selector_met(pool: Pool, key: str, values: list[str]) -> bool:
    if key in pool.labels:
        return pool.labels[key] in values
    if key in pool.allowed:
        return bool(set(pool.allowed[key]) & set(values))
    if key in gpu_selectors.INSTANCE_KEYS:
        return bool(set(pool.instance_types) & set(values))
    if key in gpu_selectors.GPU_KEYS:
        specs = {s.id for v in values if (s := catalog.label_gpu(key, v)) is not None}
        return not pool.gpus or bool(specs & {g for g, _n in pool.gpus})
    if key == GPU_PRESENT:
        return "true" in values and pool.has_gpu is not False
    if key.startswith(("karpenter.k8s.aws/", "karpenter.sh/")) and pool.kind.startswith("Karpenter"):
        return True  # a well-known label Karpenter sets from the instance it picks
    # labels every node carries whatever the pool (kubernetes.io/os, arch, zones)
    return key.startswith(("kubernetes.io/", "topology.kubernetes.io/", "beta.kubernetes.io/"))


def tolerated(taint: tuple[str, str, str], tolerations: list[dict[str, str]], resources: set[str]) -> bool:
    key, value, effect = taint
    if effect == "PreferNoSchedule" or key in resources:
        return True
    for t in tolerations:
        if t.get("effect") and t["effect"] != effect:
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == key):
            return True
        if t.get("key") == key and t.get("value", "") == value:
            return True
    return False


GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")


def requested_resources(d: Deployment) -> set[str]:
    """The extended resources the pod requests, for ExtendedResourceToleration: the resource extract read
    (`Deployment.gpu_resource`); a GPU count that names no resource (a chart's own count key) is a GPU
    request of a vendor the file does not say, so a taint keyed by either GPU resource is tolerated."""
    count = d.gpus_per_pod
    if count is None or not isinstance(count.value, int) or count.value <= 0:
        return set()
    return {d.gpu_resource} if d.gpu_resource else set(GPU_RESOURCES)


def lands_on(d: Deployment, pools: tuple[Pool, ...], admitted: tuple[Variant, ...] = ()) -> list[Pool]:
    """The pools the workload lands on; with admission variants, those any variant lands it on."""
    placement = d.placement
    labels, tolerations = placement.value if placement is not None else ([], [])
    resources = requested_resources(d)
    ways = [(labels, tolerations)]
    if admitted:
        ways = [
            (
                [*labels, *((k, list(v)) for k, v in a.labels)],
                [*tolerations, *(dict(t) for t in a.tolerations)],
            )
            for a in admitted
        ]
    out = []
    for pool in pools:
        for terms, tols in ways:
            if all(selector_met(pool, k, v) for k, v in terms) and all(
                tolerated(t, [*tols, *_class_tolerations(terms)], resources) for t in pool.taints
            ):
                out.append(pool)
                break
    return out


def _class_tolerations(terms: list[tuple[str, list[str]]]) -> list[dict[str, str]]:
    """The toleration GKE gives a pod that selects a ComputeClass, of the class's nodes' taint
    (extract/kinds/node_pool_kinds.py compute_class)."""
    return [
        {"key": k, "value": v, "effect": "NoSchedule"} for k, vs in terms if k == COMPUTE_CLASS for v in vs
    ]
