"""Node pools a cluster definition declares: what GPU a workload gets when it names none.

A pool is one group of nodes a workload can be scheduled on: a Karpenter NodePool, an eksctl node
group, a GKE node pool, an OpenShift / Cluster API machine set, a Terraform node group. Each reader
turns its definition into `Pool` records (the node labels its nodes carry, their taints, the
instance types and so the GPUs, the most nodes it grows to), located at the definition's line.
kvlint/link/pools.py finds the definitions in the repository and matches workloads to them.

A pool's GPUs are catalog ids (instance types and accelerator names looked up here): link/pools.py gathers
the GPU types of the pools a workload can land on, and one type named two ways (`g5.xlarge`, `A10G`) is
one candidate only once both are the card's id.

Labels the platforms put on every node of a pool are added as the platforms document them:
- Karpenter: `karpenter.sh/nodepool` = the NodePool's name (karpenter.sh docs, "Well-Known Labels");
- eksctl: `alpha.eksctl.io/nodegroup-name`; EKS managed node groups: `eks.amazonaws.com/nodegroup`
  (eksctl docs "Nodegroups", EKS user guide "Managed node groups");
- GKE: `cloud.google.com/gke-nodepool` and, with accelerators, `cloud.google.com/gke-accelerator`
  (GKE docs "GPUs": nodes also get the taint nvidia.com/gpu=present:NoSchedule, which GKE's
  ExtendedResourceToleration admission tolerates for pods requesting nvidia.com/gpu);
- AKS: `agentpool` and `kubernetes.azure.com/agentpool` (AKS docs "Use node pools").
"""

from __future__ import annotations

from kvlint.catalog import gpus as catalog
from kvlint.findings import Location
from kvlint.lazy_re import lazy
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import field, record


@record
class Pool:
    name: str
    kind: str  # "Karpenter NodePool", "eksctl managed node group", ...
    where: Location
    instance_types: tuple[str, ...] = ()
    gpus: tuple[tuple[str, int], ...] = ()  # (catalog GPU id, GPUs per node) each allowed node type gives
    unknown_types: tuple[str, ...] = ()  # instance types that may carry a GPU kvlint does not know
    labels: dict[str, str] = field(default_factory=dict)  # node labels every node of the pool carries
    allowed: dict[str, tuple[str, ...]] = field(default_factory=dict)  # Karpenter `In` requirements
    taints: tuple[tuple[str, str, str], ...] = ()  # (key, value, effect)
    max_nodes: int | None = None
    max_gpus: int | None = None  # a GPU limit on the pool (Karpenter spec.limits)

    @property
    def has_gpu(self) -> bool | None:
        """True: its nodes carry GPUs; False: none of its node types has one; None: not known."""
        if self.gpus:
            return True
        if self.unknown_types or not self.instance_types:
            return None
        return False

    @property
    def gpus_per_node(self) -> int | None:
        return max((n for _g, n in self.gpus), default=None) if self.gpus and not self.unknown_types else None

    def label(self) -> str:
        return f"{self.kind} {self.name!r} ({self.where.file}:{self.where.line})"


# Instance types whose family carries no accelerator, by the clouds' naming conventions:
# AWS "Amazon EC2 instance type naming conventions" (accelerated: p, g, gr, trn, inf, dl, f, vt);
# GCP "Machine families resource and comparison guide" (accelerator-optimized: a2, a3, a4, g2, g4;
# N1 takes attached GPUs, stated separately); Azure "Sizes for virtual machines" (GPU: N-series).
_AWS = lazy(r"^([a-z]+)(\d+)([a-z-]*)\.[a-z0-9]+$")
_AWS_FAMILY = lazy(r"^([a-z]+)(\d+)([a-z-]*)$")  # a family alone (Karpenter instance-family: m5)
AWS_ACCELERATED = ("p", "g", "gr", "trn", "inf", "dl", "f", "vt")
_GCP = lazy(r"^([a-z]\d[a-z]?)-[a-z]+(-\d+[a-z]*)?")
GCP_ACCELERATED = ("a2", "a3", "a4", "a4x", "g2", "g4")
COMPUTE_CLASS = "cloud.google.com/compute-class"  # a GKE ComputeClass's node label and taint key


def carries_no_gpu(instance_type: str) -> bool:
    """The instance type's family has no accelerator (m5.large, n2-standard-8, Standard_D8s_v5; an
    AWS family named alone, m5, as Karpenter's instance-family requirement names it)."""
    t = instance_type.strip()
    m = _AWS().match(t) or _AWS_FAMILY().match(t)
    if m:
        return m.group(1) not in AWS_ACCELERATED
    if t.lower().startswith("standard_"):
        return not t[len("standard_") :].upper().startswith("N")
    m = _GCP().match(t)
    if m and not t.startswith(("bm.", "BM.", "VM.")):
        return m.group(1) not in GCP_ACCELERATED
    return False


def family_types(family: str) -> list[str]:
    """The catalogued instance types of an AWS family (`g5` -> g5.xlarge ... g5.48xlarge)."""
    fam = family.strip().lower() + "."
    return [str(i["type"]) for i in catalog.instances() if str(i["type"]).lower().startswith(fam)]


def add_types(pool: Pool, types: list[str]) -> Pool:
    """The instance types a pool's nodes may be, and the GPUs that gives."""
    gpus = list(pool.gpus)
    unknown = list(pool.unknown_types)
    for t in types:
        hit = catalog.instance(t)
        if hit is not None:
            gpus.append((hit[0].id, hit[1]))
        elif not carries_no_gpu(t):
            unknown.append(t)
    pool.instance_types = (*pool.instance_types, *types)
    pool.gpus = tuple(dict.fromkeys(gpus))
    pool.unknown_types = tuple(dict.fromkeys(unknown))
    return pool


def add_gpu(pool: Pool, name: str, count: int) -> Pool:
    """An accelerator the definition names (GKE guestAccelerator, a GCP MachineSet's gpus)."""
    spec = catalog.lookup(name)
    if spec is None:
        pool.unknown_types = (*pool.unknown_types, name)
    else:
        pool.gpus = tuple(dict.fromkeys((*pool.gpus, (spec.id, count))))
    return pool


def text(node: Node | None) -> str | None:
    return str(node.value) if isinstance(node, Scalar) and node.value is not None else None


def number(node: Node | None) -> int | None:
    t = text(node)
    return int(t) if t is not None and t.isdigit() else None


def strings(node: Node | None) -> list[str]:
    if isinstance(node, Sequence):
        return [str(n.value) for n in node if isinstance(n, Scalar) and n.value is not None]
    t = text(node)
    return [t] if t is not None else []


def label_map(node: Node | None) -> dict[str, str]:
    if not isinstance(node, Mapping):
        return {}
    return {k: str(v.value) for k, v in node.items() if isinstance(v, Scalar) and v.value is not None}


def taint_list(node: Node | None) -> tuple[tuple[str, str, str], ...]:
    """Taints as Kubernetes writes them ({key, value, effect}) or as `key=value:Effect` strings;
    effects NO_SCHEDULE (GKE, Terraform) read as NoSchedule."""
    out: list[tuple[str, str, str]] = []
    if isinstance(node, Mapping):  # eksctl's older map form: key: value:Effect
        for k, v in node.items():
            out.append(taint_text(f"{k}={text(v) or ''}"))
        return tuple(out)
    for item in node if isinstance(node, Sequence) else ():
        if isinstance(item, Mapping):
            out.append(
                (text(item.get("key")) or "", text(item.get("value")) or "", effect(text(item.get("effect"))))
            )
        elif isinstance(item, Scalar) and item.value is not None:
            out.append(taint_text(str(item.value)))
    return tuple(out)


def taint_text(t: str) -> tuple[str, str, str]:
    kv, _, eff = t.partition(":")
    key, _, value = kv.partition("=")
    return key.strip(), value.strip(), effect(eff.strip())


def effect(e: str | None) -> str:
    table = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
    return table.get((e or "").upper(), e or "NoSchedule")


def gke_pool(
    name: str, kind: str, where: Location, machine: str | None, accels: list[tuple[str, int]]
) -> Pool:
    """A GKE node pool: its machine type (accelerator-optimized types carry their GPUs) and the
    accelerators attached to it; GKE labels and taints GPU nodes (module docstring)."""
    pool = Pool(name, kind, where, labels={"cloud.google.com/gke-nodepool": name})
    if machine:
        add_types(pool, [machine])
    for acc, count in accels:
        add_gpu(pool, acc, count)
        pool.labels["cloud.google.com/gke-accelerator"] = acc
        pool.taints = (*pool.taints, ("nvidia.com/gpu", "present", "NoSchedule"))
    if pool.gpus and "cloud.google.com/gke-accelerator" not in pool.labels:
        spec = catalog.by_id(pool.gpus[0][0])
        value = _gke_label(spec.id) if spec else None
        if value:
            pool.labels["cloud.google.com/gke-accelerator"] = value
    if pool.gpus:
        pool.taints = tuple(dict.fromkeys((*pool.taints, ("nvidia.com/gpu", "present", "NoSchedule"))))
    return pool


def _gke_label(gpu_id: str) -> str | None:
    for key, value in catalog.labels_of(gpu_id):
        if key == "cloud.google.com/gke-accelerator":
            return value
    return None


def placement(pod: Mapping, path: str) -> tuple[list[tuple[str, list[str]]], list[dict[str, str]]]:
    """(node-label terms, tolerations) of a pod spec: what decides the pools it can land on."""
    from kvlint.extract.pod import pods

    labels = [(k, v) for k, v, _w in pods.node_labels(pod, path)]
    tols = [
        {k: str(v.value) for k, v in t.items() if isinstance(v, Scalar) and v.value is not None}
        for t in pod.seq("tolerations") or ()
        if isinstance(t, Mapping)
    ]
    return labels, tols
