from collections.abc import Iterator

from kvlint.extract.kinds.node_pools import Pool
from kvlint.findings import Finding, Severity
from kvlint.rules.base import DeploymentContext, DeploymentRule


class GpusExceedPoolNode(DeploymentRule):
    """A pod asks for more GPUs than any node of the node pools it can land on has.

    ## What it does
    Compares the GPUs one pod requests (`nvidia.com/gpu` as written) with the GPUs per node of every
    node pool the repository's cluster definition declares and the pod can land on (its
    nodeSelector, required node affinity and tolerations against the pools' labels and taints:
    Karpenter NodePools, eksctl and Terraform node groups, GKE node pools, MachineSets). A node
    pool's GPUs per node come from its instance types (p4d.24xlarge: 8), or its guest accelerator
    count; a Karpenter `limits: {nvidia.com/gpu: N}` caps what the pool may hold at all.

    ## Why is this bad?
    The scheduler places a pod on one node: a pod asking for 8 GPUs on nodes of 4 stays Pending
    forever ("Insufficient nvidia.com/gpu"), and an autoscaler never adds a node that could take it.

    ## Formula
    error when `GPUs per pod > max(GPUs per node)` over the pools it can land on, every pool's
    node types known (or the pool's GPU limit is below the request).

    ## Example
    An 8-GPU pod tolerating a Karpenter NodePool of g6.xlarge..g6.12xlarge (at most 4 x L4).

    Use instead: tensor parallelism over the GPUs one node has, a pool with larger nodes, or a
    multi-node layout (LeaderWorkerSet).

    ## How to fix
    Request at most the GPUs of the pool's largest node, or allow a larger instance type.

    ## Suppress
    `# kvlint: disable=KV210 -- reason`, or `kvlint.io/ignore: "KV210=reason"`.
    """

    id = "KV210"
    name = "gpus-exceed-pool-node"
    severity = Severity.ERROR

    def check(self, ctx: DeploymentContext) -> Iterator[Finding]:
        d = ctx.deployment
        found = d.node_pools
        if found is None or d.gpus_per_pod is None or d.gpus_per_pod.origin != "stated":
            return
        want = int(d.gpus_per_pod.value or 0)
        pools = [p for p in found.value if p.has_gpu]
        if not pools or want <= 0:
            return
        caps = [min(x for x in (p.gpus_per_node, p.max_gpus) if x is not None) for p in pools if _known(p)]
        if len(caps) < len(pools) or max(caps) >= want:
            return
        names = "; ".join(f"{p.label()}: {_cap(p)}" for p in pools)
        yield ctx.finding(
            self,
            d.gpus_per_pod.where or d.where,
            f"{want} GPUs per pod, but no node it can land on has that many: at most {max(caps)} "
            f"({names}): the pod never schedules",
            fix=f"request at most {max(caps)} GPUs per pod, or allow a larger instance type in the pool",
        )


def _known(p: Pool) -> bool:
    return p.gpus_per_node is not None or p.max_gpus is not None


def _cap(p: Pool) -> str:
    parts = []
    if p.gpus_per_node is not None:
        parts.append(f"{p.gpus_per_node} GPU{'s' if p.gpus_per_node != 1 else ''} per node")
    if p.max_gpus is not None:
        parts.append(f"a limit of {p.max_gpus} GPUs")
    return ", ".join(parts)
