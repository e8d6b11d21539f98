from collections.abc import Iterator

from kvlint.extract.kinds.node_pools import Pool
from kvlint.findings import Finding, Severity
from kvlint.rules.base import DeploymentContext, DeploymentRule


class GroupExceedsPool(DeploymentRule):
    """A multi-pod group needs more GPUs than the node pools it can land on can grow to.

    ## What it does
    For a replica spread over several pods (a LeaderWorkerSet group, Ray workers, SGLang
    `--nnodes`), compares the GPUs the whole group requests with what the node pools it can land
    on hold at their largest: max nodes (eksctl `maxSize`, Terraform `max_size` /
    `max_node_count`, ContainerNodePool `maxNodeCount`, the Cluster API autoscaler's max size, a
    MachineSet's replicas) x GPUs per node, or a Karpenter NodePool's `limits: {nvidia.com/gpu}`.

    ## Why is this bad?
    The group's pods start together (the leader waits for its workers): when the pools cannot
    grow to hold all of them, part of the group stays Pending and the replica never serves.

    ## Formula
    warning when `pods x GPUs per pod > sum(max nodes x GPUs per node)` over the pools it can
    land on, every pool's size known.

    ## Example
    An LWS of size 4 with 4 GPUs per pod (16 GPUs) on an eksctl node group of g5.12xlarge
    (4 GPUs) with `maxSize: 2` (8 GPUs).

    Use instead: a `maxSize` that holds the group, or fewer, larger pods.

    ## How to fix
    Raise the pool's maximum size (or GPU limit), or shrink the group.

    ## Suppress
    `# kvlint: disable=KV211 -- reason`, or `kvlint.io/ignore: "KV211=reason"`.
    """

    id = "KV211"
    name = "group-exceeds-pool"
    severity = Severity.WARNING

    def check(self, ctx: DeploymentContext) -> Iterator[Finding]:
        d = ctx.deployment
        found = d.node_pools
        if found is None or d.pods is None or d.gpus_per_pod is None:
            return
        pods, per_pod = int(d.pods.value or 1), int(d.gpus_per_pod.value or 0)
        pools = [p for p in found.value if p.has_gpu]
        if pods <= 1 or per_pod <= 0 or not pools:
            return
        sizes = [_size(p) for p in pools]
        if any(s is None for s in sizes):
            return
        room = sum(s for s in sizes if s is not None)
        need = pods * per_pod
        if need <= room:
            return
        names = "; ".join(f"{p.label()}: {_said(p)}" for p in pools)
        yield ctx.finding(
            self,
            d.pods.where or d.where,
            f"the group of {pods} pods x {per_pod} GPUs needs {need} GPUs, but the node pools it can land on "
            f"grow to {room} ({names}): part of the group stays Pending",
            fix=f"let the pool grow to {need} GPUs (max nodes or GPU limit), or shrink the group",
        )


def _size(p: Pool) -> int | None:
    per = p.gpus_per_node
    by_nodes = p.max_nodes * per if p.max_nodes is not None and per is not None else None
    if p.max_gpus is not None:
        return min(p.max_gpus, by_nodes) if by_nodes is not None else p.max_gpus
    return by_nodes


def _said(p: Pool) -> str:
    parts = []
    if p.max_nodes is not None:
        parts.append(f"at most {p.max_nodes} node{'s' if p.max_nodes != 1 else ''} of {p.gpus_per_node} GPUs")
    if p.max_gpus is not None:
        parts.append(f"a limit of {p.max_gpus} GPUs")
    return ", ".join(parts)
