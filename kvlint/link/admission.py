"""What admission adds to a workload's placement before the scheduler sees it: Kueue's ResourceFlavors
and Open Data Hub / RHOAI HardwareProfiles found in the repository beside the node pools.

- Kueue: a workload labelled `kueue.x-k8s.io/queue-name: Q` (on the object, or on its pod template)
  is admitted through LocalQueue Q (the one in the workload's namespace when both name one) ->
  `spec.clusterQueue` -> that ClusterQueue's `resourceGroups[].flavors` (the groups covering the GPU
  resource the pod requests, else all). The flavor assigned has its `nodeLabels` injected into the
  pods' nodeSelector and its `tolerations` added to theirs (kubernetes-sigs/kueue
  apis/kueue/v1beta1/resourceflavor_types.go, ResourceFlavorSpec nodeLabels / tolerations). Kueue
  may assign any flavor of the queue: each is one variant, matched to the pools on its own.
- HardwareProfile (infrastructure.opendatahub.io/v1): a workload annotated
  `opendatahub.io/hardware-profile-name` (a Notebook, InferenceService or LLMInferenceService:
  opendatahub-operator pkg/webhook hardwareprofile, HardwareProfileNameAnnotation) gets
  `spec.scheduling.node.nodeSelector` / `tolerations` (scheduling type Node) or is queued on
  `spec.scheduling.kueue.localQueueName` (type Queue), as the operator's mutating webhook writes them.
  The older dashboard.opendatahub.io AcceleratorProfile is applied by the dashboard when it creates
  the workload, not at admission: a file that only names one is not changed by it.
"""

from __future__ import annotations

from collections.abc import Callable

from kvlint.extract.kinds.node_pools import label_map, strings, text
from kvlint.findings import Location
from kvlint.load.tree import Mapping, Sequence
from kvlint.record import field, record, replace

KUEUE = "kueue.x-k8s.io"
HWP = "infrastructure.opendatahub.io"
GROUPS = (KUEUE, HWP)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PROFILE_ANNOTATION = "opendatahub.io/hardware-profile-name"
PROFILE_NAMESPACE = "opendatahub.io/hardware-profile-namespace"


@record
class Variant:
    """Node labels and tolerations admission adds, and what added them (kind 'name' (file:line))."""

    labels: tuple[tuple[str, tuple[str, ...]], ...]
    tolerations: tuple[tuple[tuple[str, str], ...], ...]
    source: str


@record
class Admission:
    """The admission objects of a repository, by name."""

    local_queues: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # name -> [(ns, cq)]
    cluster_queues: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = field(default_factory=dict)
    flavors: dict[str, tuple[Mapping, Location]] = field(default_factory=dict)
    profiles: dict[str, list[tuple[str, Mapping, Location]]] = field(
        default_factory=dict
    )  # name -> [(ns, ..)]

    def __bool__(self) -> bool:
        return bool(self.flavors or self.profiles)

    def add(self, root: Mapping, path: str) -> bool:
        """Take the object if it is one admission reads; False otherwise."""
        group = str(root.value("apiVersion") or "").split("/")[0]
        kind, name = str(root.value("kind") or ""), text(root.at("metadata", "name")) or ""
        ns = text(root.at("metadata", "namespace")) or ""
        spec = root.get("spec")
        if group not in GROUPS or not name or not isinstance(spec, Mapping):
            return False
        if (group, kind) == (KUEUE, "LocalQueue"):
            self.local_queues.setdefault(name, []).append((ns, text(spec.get("clusterQueue")) or ""))
        elif (group, kind) == (KUEUE, "ClusterQueue"):
            self.cluster_queues[name] = _resource_groups(spec)
        elif (group, kind) == (KUEUE, "ResourceFlavor"):
            self.flavors[name] = (spec, root.where(path))
        elif (group, kind) == (HWP, "HardwareProfile"):
            self.profiles.setdefault(name, []).append((ns, spec, root.where(path)))
        else:
            return False
        return True

    def relocated(self, show: Callable[[str], str]) -> Admission:
        """The same objects, their locations' files as `show` gives them."""
        out = Admission(dict(self.local_queues), dict(self.cluster_queues))
        out.flavors = {n: (spec, replace(w, file=show(w.file))) for n, (spec, w) in self.flavors.items()}
        out.profiles = {
            n: [(ns, spec, replace(w, file=show(w.file))) for ns, spec, w in entries]
            for n, entries in self.profiles.items()
        }
        return out

    def merged(self, other: Admission) -> Admission:
        out = Admission()
        for mine in (self, other):
            for name, queues in mine.local_queues.items():
                out.local_queues.setdefault(name, []).extend(queues)
            out.cluster_queues.update(mine.cluster_queues)
            out.flavors.update(mine.flavors)
            for name, profiles in mine.profiles.items():
                out.profiles.setdefault(name, []).extend(profiles)
        return out


def _resource_groups(spec: Mapping) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    out = []
    for group in spec.seq("resourceGroups") or ():
        if not isinstance(group, Mapping):
            continue
        covered = group.get("coveredResources")
        names = tuple(strings(covered))
        flavors = tuple(
            n for f in group.seq("flavors") or () if isinstance(f, Mapping) and (n := text(f.get("name")))
        )
        out.append((names, flavors))
    return out


def workload_refs(root: Mapping) -> tuple[str, str, str, str]:
    """(namespace, queue name, hardware profile name, its namespace) a workload object names."""
    labels = label_map(root.at("metadata", "labels"))
    pod_labels = label_map(root.at("spec", "template", "metadata", "labels"))
    notes = label_map(root.at("metadata", "annotations"))
    queue = labels.get(QUEUE_LABEL) or pod_labels.get(QUEUE_LABEL) or ""
    ns = text(root.at("metadata", "namespace")) or ""
    return ns, queue, notes.get(PROFILE_ANNOTATION, ""), notes.get(PROFILE_NAMESPACE, "")


def variants(adm: Admission, refs: tuple[str, str, str, str], resources: set[str]) -> list[Variant]:
    """The placements admission may give the workload (empty: it adds nothing kvlint knows)."""
    ns, queue, profile, profile_ns = refs
    out: list[Variant] = []
    if profile:
        for spec, where in _pick(adm.profiles.get(profile, []), profile_ns):
            sched = spec.get("scheduling")
            sched = sched if isinstance(sched, Mapping) else Mapping((0, 0, 0, 0))
            src = f"HardwareProfile {profile!r} ({where.file}:{where.line})"
            if text(sched.get("type")) == "Queue":
                queue = queue or text(sched.at("kueue", "localQueueName")) or ""
            else:
                node = sched.get("node")
                node = node if isinstance(node, Mapping) else Mapping((0, 0, 0, 0))
                out.append(_variant(label_map(node.get("nodeSelector")), node.get("tolerations"), src))
    if queue:
        out.extend(_queued(adm, ns, queue, resources))
    return out


def _pick(entries: list, ns: str) -> list:
    """The entries (namespace first) in the namespace named, else all of them."""
    same = [e[1:] for e in entries if ns and e[0] == ns]
    return same or [e[1:] for e in entries]


def _queued(adm: Admission, ns: str, queue: str, resources: set[str]) -> list[Variant]:
    out: list[Variant] = []
    for (cq,) in _pick(adm.local_queues.get(queue, []), ns):
        groups = adm.cluster_queues.get(cq, [])
        covering = [flavors for covered, flavors in groups if resources & set(covered)]
        for name in dict.fromkeys(f for flavors in covering or [f for _c, f in groups] for f in flavors):
            if name not in adm.flavors:
                continue
            spec, where = adm.flavors[name]
            src = f"Kueue ResourceFlavor {name!r} ({where.file}:{where.line}) of LocalQueue {queue!r}"
            out.append(_variant(label_map(spec.get("nodeLabels")), spec.get("tolerations"), src))
    return out


def _variant(labels: dict[str, str], tolerations, source: str) -> Variant:
    tols = tuple(
        tuple(label_map(t).items())
        for t in (tolerations.items if isinstance(tolerations, Sequence) else ())
        if isinstance(t, Mapping)
    )
    return Variant(tuple((k, (v,)) for k, v in labels.items()), tols, source)
