"""Shared GPUs: several pods on one card's memory (time-slicing or MPS).

The NVIDIA device plugin advertises each card `replicas` times when its config says so
(`sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: N}]}}`, or `mps:`; kept in a
ConfigMap the GPU operator's ClusterPolicy points at), as `nvidia.com/gpu.shared` with
renameByDefault. Time-slicing shares the memory without any limit, so each engine must take a
fraction that leaves room for the others: vLLM V1 refuses to start when less than
`gpu_memory_utilization` x total is free ("Free memory on device … is less than desired GPU memory
utilization"). Up to N pods can land on one card (N unknown: every shared-GPU pod of the file), and
the scheduler may put the most demanding ones together, so the fractions of the N largest must add
up to less than 1. The sum is kept for each deployment that takes part (`InForce.gpu_sharing`);
KV208 reports it at the fraction's value. MPS is summed the same way; the sum below 1 is necessary
there, not sufficient: an MPS client may also be capped (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT) while
cudaMemGetInfo still reports the whole card as total (find_string 'CUDA_MPS_PINNED_DEVICE_MEM_LIMIT'
hit 40667668811: 'memory total 14930.56 MB', free capped at 1000 MB), so an engine asking for
u x total can fail inside its cap; kvlint does not read that cap.
"""

from __future__ import annotations

from collections.abc import Callable

from kvlint.deployment import DEFAULT_ENGINE, Deployment, Value, inferred
from kvlint.findings import Location
from kvlint.load.compose import compose
from kvlint.load.tree import Mapping, Scalar, Sequence
from kvlint.record import record

SHARED_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu.shared")


@record
class Replicas:
    strategy: str  # "time-slicing" | "mps"
    replicas: int
    where: Location
    file: str
    renamed: bool = True  # advertised under another name (nvidia.com/gpu.shared); False: as nvidia.com/gpu


@record
class Sharer:
    """One workload's part in a card's memory, once resolved."""

    deployment: Deployment
    card: str  # the resolved GPU's catalog id, "" when none
    fraction: float | None  # the engine's memory fraction: as resolved (defaults filled), else as stated
    engine: str = DEFAULT_ENGINE  # the engine in force (resolve's `in_force`), whose default a fraction is


def replicas(root: Mapping, file: str) -> list[Replicas]:
    """Sharing replicas from a ConfigMap holding a device-plugin config (any of its data values)."""
    if root.value("kind") != "ConfigMap":
        return []
    data = root.map("data")
    out: list[Replicas] = []
    for _key, node in data.items() if data is not None else ():
        if not isinstance(node, Scalar) or not isinstance(node.value, str) or "sharing" not in node.value:
            continue
        docs, issues = compose(node.value, file)
        if issues:
            continue
        for doc in docs:
            sharing = doc.root.map("sharing") if isinstance(doc.root, Mapping) else None
            for key, strategy in (("timeSlicing", "time-slicing"), ("mps", "mps")):
                block = sharing.map(key) if sharing is not None else None
                res = block.seq("resources") if block is not None else None
                by_default = block is not None and block.value("renameByDefault") is True
                for item in res.items if isinstance(res, Sequence) else ():
                    if not isinstance(item, Mapping):
                        continue
                    n = item.value("replicas")
                    if item.value("name") in SHARED_RESOURCES and isinstance(n, int) and n > 1:
                        renamed = by_default or bool(item.value("rename"))
                        out.append(Replicas(strategy, n, node.where(file), file, renamed))
    return out


def overcommits(sharers: list[Sharer], read_configs: Callable[[], list[Replicas]]) -> dict[int, Value[float]]:
    """The shared-card arithmetic for each deployment whose fraction takes part in an overcommit, by the
    deployment's id (the run keeps it in the settings in force, `InForce.gpu_sharing`). The device
    plugin's configs are read (`read_configs`, the directory beside the file) only when two or more
    pods share a card."""
    out: dict[int, Value[float]] = {}
    groups: dict[str, list[Sharer]] = {}
    for s in sharers:
        shared = s.deployment.gpu_shared
        if shared is not None and s.fraction is not None:
            key = str(shared.value) if str(shared.value).startswith("claim:") else s.card
            groups.setdefault(key, []).append(s)
    unrenamed = _unrenamed(sharers, read_configs)
    for s in unrenamed:
        groups.setdefault(s.card, []).append(s)
    for key, group in groups.items():
        claim = key.removeprefix("claim:") if key.startswith("claim:") else None
        pods = _each_pod(group)
        if len(pods) < 2:
            continue
        configs = [] if claim else read_configs()
        cap = min((c.replicas for c in configs), default=None)
        pods.sort(key=lambda p: -p[0])
        together = pods if claim else pods[: cap or len(pods)]
        total = sum(u for u, _ in together)
        if len(together) < 2 or total < 1:
            continue
        engine = {id(s.deployment): s.engine for s in group}
        terms = " + ".join(f"{u:g} ({_name(d, engine[id(d)])})" for u, d in together)
        how = _how_shared(claim, configs, cap, all(s in unrenamed for s in group))
        text = (
            f"{len(together)} pods on one shared GPU take {terms} = {total:.2f} of its memory (>= 1); {how}"
        )
        for d in {id(d): d for _u, d in together}.values():
            out[id(d)] = inferred(total, text, _where(d))
    return out


def _each_pod(group: list[Sharer]) -> list[tuple[float, Deployment]]:
    """(fraction of the card, deployment) for every pod of the group: a deployment counts once per replica."""
    pods: list[tuple[float, Deployment]] = []
    for s in group:
        count = s.deployment.pod_replicas
        n = int(count.value) if count is not None else 1
        pods.extend([(s.fraction or 0.0, s.deployment)] * n)
    return pods


def _how_shared(claim: str | None, configs: list[Replicas], cap: int | None, unrenamed: bool) -> str:
    """Why these pods end on one card: one ResourceClaim, a sharing config (renaming or not), or none at all."""
    if claim:
        return f"every pod that names ResourceClaim {claim!r} gets the same device(s)"
    if cap and unrenamed:
        return (
            f"the device plugin's {configs[0].strategy} config ({configs[0].file}) shares each card {cap} "
            "ways and keeps the name nvidia.com/gpu: a pod asking nvidia.com/gpu gets a share of a card "
            "on the nodes it applies to"
        )
    if cap:
        return f"the device plugin's {configs[0].strategy} config shares each card {cap} ways ({configs[0].file})"
    return "no device-plugin sharing config beside the file: every shared-GPU pod here may land on one card"


def _pods(group: list[Sharer]) -> int:
    return sum(int(c.value) if (c := s.deployment.pod_replicas) is not None else 1 for s in group)


def _unrenamed(sharers: list[Sharer], read_configs: Callable[[], list[Replicas]]) -> list[Sharer]:
    """Workloads asking plain nvidia.com/gpu that share cards all the same: a sharing config beside
    them that does not rename the resource (renameByDefault false, the default, and no `rename`)
    advertises each card's replicas as nvidia.com/gpu (NVIDIA/k8s-device-plugin README, "Shared
    Access to GPUs": only the product label gains -SHARED). Read only when two such pods exist."""
    plain = [
        s
        for s in sharers
        if s.fraction is not None
        and s.deployment.gpu_shared is None
        and s.deployment.extra.get("mig_profile") is None
        and s.deployment.gpus_per_pod is not None
        and s.deployment.gpu_resource == "nvidia.com/gpu"
    ]
    if _pods(plain) < 2:
        return []
    return plain if any(not c.renamed and c.strategy == "time-slicing" for c in read_configs()) else []


def _name(d: Deployment, engine: str) -> str:
    v = d.gpu_memory_utilization or d.extra.get("mem_fraction_static") or d.extra.get("cuda_memory_fraction")
    named = d.name or d.kind
    if v is None or v.origin == "default":
        return f"{named}, the {engine} default"
    return named


def _where(d: Deployment) -> Location:
    for v in (d.gpu_memory_utilization, d.extra.get("mem_fraction_static"), d.gpu_shared):
        if isinstance(v, Value) and v.where is not None and v.origin != "default":
            return v.where
    return d.where
