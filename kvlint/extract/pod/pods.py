"""Pod templates wherever a Kubernetes object keeps them, and the container facts rules need."""

from __future__ import annotations

from kvlint.findings import Location
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import record

MAX_DEPTH = 14
MAX_NODES = 50_000
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
TPU_RESOURCES = ("google.com/tpu",)
NEURON_RESOURCES = ("aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice")
GAUDI_RESOURCES = ("habana.ai/gaudi",)
SHARED_GPU = "nvidia.com/gpu.shared"  # time-sliced / MPS replicas with the device plugin's renameByDefault
MIG_PREFIX = "nvidia.com/mig-"  # a MIG slice under the device plugin's mixed strategy
# GPUs counted under a GPU-sharing plugin's own name (Volcano vGPU: extract/pod/vgpu.py)
VGPU_COUNTS = ("volcano.sh/vgpu-number",)


def is_ascend(name: str) -> bool:
    """Huawei's Ascend device plugin: huawei.com/Ascend910, huawei.com/Ascend910B3, huawei.com/Ascend310P …"""
    return name.lower().startswith("huawei.com/ascend")


def is_gpu(name: str) -> bool:
    """A resource that hands the container a GPU, a shared GPU or a MIG slice."""
    return name in GPU_RESOURCES or name == SHARED_GPU or name.startswith(MIG_PREFIX) or name in VGPU_COUNTS


@record
class PodSpec:
    node: Mapping
    path: tuple[str, ...]  # keys from the object root, e.g. ("spec", "template", "spec")


def find_pod_specs(root: Node) -> list[PodSpec]:
    """Every mapping with a `containers` list of mappings, outermost first. Aliases are visited
    once, and the walk is bounded, so hostile documents cannot make it slow."""
    out: list[PodSpec] = []
    seen: set[int] = set()
    budget = [MAX_NODES]

    def walk(node: Node, path: tuple[str, ...], depth: int) -> None:
        if depth > MAX_DEPTH or id(node) in seen or budget[0] <= 0:
            return
        seen.add(id(node))
        budget[0] -= 1
        if isinstance(node, Mapping):
            containers = node.get("containers")
            if isinstance(containers, Sequence) and any(isinstance(c, Mapping) for c in containers):
                out.append(PodSpec(node, path))
                return
            for key, child in node.items():
                if key in ("metadata", "status", "env", "volumeMounts", "ports", "resources"):
                    continue
                walk(child, (*path, key), depth + 1)
        elif isinstance(node, Sequence):
            for i, child in enumerate(node.items):
                walk(child, (*path, str(i)), depth + 1)

    walk(root, (), 0)
    return out


def containers(pod: Mapping) -> list[Mapping]:
    seq = pod.seq("containers")
    return [c for c in seq or () if isinstance(c, Mapping)]


@record
class Resource:
    name: str
    count: int | None  # None: written but not a whole number
    where: Location
    text: str = ""


def device_resources(container: Mapping, path: str) -> list[Resource]:
    """Accelerator counts from resources.limits (requests if no limit is set)."""
    res = container.map("resources")
    if res is None:
        return []
    found: dict[str, Resource] = {}
    for section in ("requests", "limits"):  # limits win
        table = res.map(section)
        if table is None:
            continue
        for name, node in table.items():
            known = (
                is_gpu(name) or is_ascend(name) or name in TPU_RESOURCES + NEURON_RESOURCES + GAUDI_RESOURCES
            )
            if known and isinstance(node, Scalar):
                text = str(node.value).strip().strip('"')
                try:
                    count: int | None = int(text)
                except ValueError:
                    count = None
                found[name] = Resource(name, count, node.where(path), text)
            elif known:  # a list or map where a quantity belongs: not a count, never "no GPU"
                text = "[...]" if isinstance(node, Sequence) else "{...}"
                found[name] = Resource(name, None, node.where(path), text)
    return list(found.values())


def memory_limit(container: Mapping, path: str) -> tuple[str, Location] | None:
    node = container.at("resources", "limits", "memory")
    if isinstance(node, Scalar) and node.value is not None:
        return str(node.value), node.where(path)
    return None


@record
class Shm:
    present: bool  # a memory-backed volume mounted at /dev/shm
    size: str | None  # sizeLimit as written
    where: Location | None


def shm(pod: Mapping, container: Mapping, path: str) -> Shm:
    mounts = {m.value("name"): m for m in container.seq("volumeMounts") or () if isinstance(m, Mapping)}
    shm_names = [n for n, m in mounts.items() if str(m.value("mountPath") or "").rstrip("/") == "/dev/shm"]
    for vol in pod.seq("volumes") or ():
        if not isinstance(vol, Mapping) or vol.value("name") not in shm_names:
            continue
        empty = vol.map("emptyDir")
        if empty is not None and str(empty.value("medium") or "") == "Memory":
            size = empty.scalar("sizeLimit")
            return Shm(True, str(size.value) if size is not None else None, (size or vol).where(path))
        if vol.get("hostPath") is not None:
            return Shm(True, None, vol.where(path))
    return Shm(False, None, None)


def node_labels(pod: Mapping, path: str) -> list[tuple[str, list[str], Location]]:
    """(key, allowed values, where) from nodeSelector and required node-affinity `In` terms."""
    out: list[tuple[str, list[str], Location]] = []
    sel = pod.map("nodeSelector")
    for key, node in sel.items() if sel else ():
        if isinstance(node, Scalar) and node.value is not None:
            out.append((key, [str(node.value)], node.where(path)))
    terms = pod.at(
        "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"
    )
    for term in terms.items if isinstance(terms, Sequence) else ():
        if not isinstance(term, Mapping):
            continue
        for expr in term.seq("matchExpressions") or ():
            if not isinstance(expr, Mapping) or expr.value("operator") != "In":
                continue
            values = expr.seq("values")
            key = expr.value("key")
            if isinstance(key, str) and values is not None:
                vals = [str(v.value) for v in values if isinstance(v, Scalar)]
                where = values.items[0].where(path) if values.items else expr.where(path)
                out.append((key, vals, where))
    return out
