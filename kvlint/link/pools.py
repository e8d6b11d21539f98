"""The GPU the cluster gives: node-pool definitions found in the repository, matched to workloads.

Where: the repository root is the closest directory above the linted file that holds `.git` or a
kvlint configuration file (`.kvlint.yaml`), at most ROOT_DEPTH levels up; with none, no cluster
definition is read. Under the root, files are walked (no symlink followed, hidden and dependency
folders skipped, a folder that is its own repository skipped) to WALK_DEPTH levels, at most
FILES_MAX files and BYTES_MAX bytes read, each directory listed once per run: YAML objects the
registry names (extract/registry.py NODE_POOL_KINDS), the same in a shell script's here-documents
(`cat <<EOF | kubectl apply -f -`, load/heredoc.py), Terraform and ARM files; and the admission objects
that add to a workload's placement (Kueue queues and ResourceFlavors, HardwareProfiles: admission.py).

Matching: a workload lands on a pool when every nodeSelector / required node-affinity `In` term
is met by the labels the pool's nodes carry (or may carry: Karpenter requirements, instance-type
and GPU labels), and it tolerates each NoSchedule / NoExecute taint (a taint keyed by a resource the
pod requests, nvidia.com/gpu, is tolerated: ExtendedResourceToleration). A pod asking for GPUs does
not land on a pool whose node types carry none, nor on another cloud's pool when its folders name
a cloud (a repository of several clusters, one folder per cloud: clouds.py). The queue or HardwareProfile a workload names may add
node labels and tolerations first (admission.py); the matching itself is landing.py. One GPU type
among the pools -> that GPU (inferred, the note names the pool file:line, and the flavor or profile
that admitted it); several -> checked on each (run/fleet.py); GPU pools none.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kvlint.deployment import Deployment, Value, inferred
from kvlint.extract.kinds.node_pools import Pool
from kvlint.fileio import nearest_up, read_regular
from kvlint.link import clouds
from kvlint.link.admission import GROUPS as ADMISSION_GROUPS
from kvlint.link.admission import Admission, Variant, variants, workload_refs
from kvlint.link.landing import lands_on, requested_resources
from kvlint.load import load_bytes
from kvlint.load.compose import Document
from kvlint.load.heredoc import heredocs
from kvlint.load.tree import Mapping, Scalar
from kvlint.record import record, replace

if TYPE_CHECKING:  # the readers (extract/registry) load only when a file names a node-pool kind
    from kvlint.extract.kinds.node_pool_kinds import Known

CONFIG_NAMES = (".kvlint.yaml", ".kvlint.yml")  # kvlint's configuration files (run/config.py): a project root
ROOT_DEPTH = 8
WALK_DEPTH = 8
FILES_MAX = 4000
BYTES_MAX = 64 * 1024 * 1024
FILE_MAX = 4 * 1024 * 1024
SKIP_DIRS = ("node_modules", "vendor", "venv", "__pycache__", "site-packages", "dist", "build")
YAML = (".yaml", ".yml")
# API groups of node-pool objects and their templates (extract/registry.py NODE_POOL_KINDS)
POOL_GROUPS = (
    "karpenter.sh",
    "eksctl.io",
    "container.cnrm.cloud.google.com",
    "machine.openshift.io",
    "cluster.x-k8s.io",
    "infrastructure.cluster.x-k8s.io",
    "containerservice.azure.com",
    "cloud.google.com",  # ComputeClass; the group names much else, so the walk's marker is the kind
)
_YAML_MARKERS = (
    *(g.encode() for g in (*POOL_GROUPS, *ADMISSION_GROUPS) if g != "cloud.google.com"),
    b"ComputeClass",
)
# what a file must contain to be parsed at all, by suffix (the readers check the same again); a shell
# script's here-documents are read as YAML (load/heredoc.py: `cat <<EOF | kubectl apply -f -`)
MARKERS: dict[str, tuple[bytes, ...]] = {
    ".yaml": _YAML_MARKERS,
    ".yml": _YAML_MARKERS,
    ".sh": _YAML_MARKERS,
    ".tf": (b"node_group", b"node_pool", b"karpenter"),
    ".json": (b"Microsoft.ContainerService",),
}


def root_of(real_path: str) -> str | None:
    """The repository root the pool search stops at: the nearest folder up holding `.git` or a
    kvlint configuration file."""
    return nearest_up(os.path.dirname(os.path.abspath(real_path)), (".git", *CONFIG_NAMES), ROOT_DEPTH)


def pools_for(
    real_path: str | None, display: str, documents: list[Document] | None = None
) -> tuple[tuple[Pool, ...], ...]:
    """The pools a workload may land on, nearest first: those the linted file's own documents
    define, then those under each folder from the file's up to the repository root (shown relative
    to where the file is shown). `attach` takes the first level with a pool the workload lands on."""
    own = _own_pools(documents or [], display)
    root = root_of(real_path) if real_path is not None else None
    found = repository_pools(root) if root is not None and real_path is not None else ()
    if not found:
        return (own,) if own else ()
    # a .tf file's own pools are its resources as well as the objects it carries: the walk read both
    tf = display.endswith(".tf")
    own = () if tf else own
    assert real_path is not None and root is not None
    from kvlint.record import replace

    here = os.path.dirname(os.path.abspath(real_path))
    shown = os.path.dirname(display)
    mine = os.path.relpath(os.path.abspath(real_path), root)
    found = tuple(p for p in found if clouds.same_cloud(mine, p.kind, p.where.file))
    levels: list[tuple[Pool, ...]] = [own] if own else []
    for level in _levels(found, root, here):
        out = []
        for pool in level:
            rel = os.path.relpath(os.path.join(root, pool.where.file), here)
            if tf or os.path.normpath(os.path.join(root, pool.where.file)) != os.path.abspath(real_path):
                out.append(
                    replace(pool, where=replace(pool.where, file=os.path.normpath(os.path.join(shown, rel))))
                )
        if out:
            levels.append((*own, *out))
    return tuple(levels)


def _levels(found: tuple[Pool, ...], root: str, here: str) -> list[list[Pool]]:
    """The pools under each folder from the linted file's up to the root, nearest first, each level
    holding the ones before: a repository of several clusters (one folder each) gives a workload
    its own folder's first."""
    rel = os.path.relpath(here, root)
    parts = [] if rel == "." else rel.split(os.sep)
    out: list[list[Pool]] = []
    seen = 0
    for depth in range(len(parts), -1, -1):
        prefix = os.path.join(*parts[:depth]) if depth else ""
        under = [p for p in found if not prefix or p.where.file.startswith(prefix + os.sep)]
        if len(under) > seen:
            out.append(under)
            seen = len(under)
    return out


def admitted(
    d: Deployment, real_path: str | None, display: str, documents: list[Document]
) -> tuple[Variant, ...]:
    """What admission may add to the workload's placement (link/admission.py): the Kueue queue or the
    HardwareProfile its object names, looked up in the file's own objects and the repository's."""
    obj = _object_of(d, documents)
    refs = workload_refs(obj) if obj is not None else None
    if refs is None or not (refs[1] or refs[2]):
        return ()
    adm = Admission()
    for doc in documents:
        if isinstance(doc.root, Mapping):
            adm.add(doc.root, display)
    root = root_of(real_path) if real_path is not None else None
    found = repository(root).admission if root is not None and real_path is not None else None
    if found is not None and root is not None and real_path is not None:
        here, shown = os.path.dirname(os.path.abspath(real_path)), os.path.dirname(display)
        adm = adm.merged(
            found.relocated(
                lambda f: os.path.normpath(os.path.join(shown, os.path.relpath(os.path.join(root, f), here)))
            )
        )
    return tuple(variants(adm, refs, requested_resources(d)))


def _object_of(d: Deployment, documents: list[Document]) -> Mapping | None:
    """The object of the file the workload was read from (the document its location is in)."""
    for doc in documents:
        root = doc.root
        if isinstance(root, Mapping) and root.line + 1 <= d.where.line <= root.end_line + 1:
            return root
    return None


def _own_pools(documents: list[Document], display: str) -> tuple[Pool, ...]:
    roots = [d.root for d in documents if isinstance(d.root, Mapping) and d.root.value("kind")]
    if not any(str(r.value("apiVersion") or "").split("/")[0] in POOL_GROUPS for r in roots):
        return ()
    from kvlint.extract.registry import NODE_POOL_TEMPLATES, node_pool_reader

    known: Known = {}
    for root in roots:
        if str(root.value("kind") or "") in NODE_POOL_TEMPLATES:
            known.setdefault(str(root.value("kind")), {})[_name(root)] = root
    out: list[Pool] = []
    for root in roots:
        reader = node_pool_reader(root)
        if reader is not None:
            out.extend(reader(root, display, known))
    return tuple(out)


@record
class Cluster:
    """A repository's cluster definition: its node pools and the admission objects (Kueue queues and
    flavors, HardwareProfiles) that add placement to a workload; file paths relative to the root."""

    pools: tuple[Pool, ...] = ()
    admission: Admission | None = None


def repository_pools(root: str) -> tuple[Pool, ...]:
    """Every pool defined under the root (file paths relative to it)."""
    return repository(root).pools


@lru_cache(maxsize=16)
def repository(root: str) -> Cluster:
    """The cluster definition under the root; the walk is bounded, and the readers load only when a
    file names a node-pool kind."""
    budget = [FILES_MAX, BYTES_MAX]
    candidates = [
        (rel, data)
        for rel, data in _files(root, budget)
        if any(m in data for m in MARKERS[os.path.splitext(rel)[1]])
    ]
    if not candidates:
        return Cluster()
    from kvlint.extract.registry import NODE_POOL_FILES, node_pool_file_reader

    objects: list[tuple[str, Mapping]] = []
    known: Known = {}
    admission = Admission()
    pools: list[Pool] = []
    for rel, data in candidates:
        if rel.endswith(YAML):
            _objects(load_bytes(data, rel, FILE_MAX).documents, rel, known, objects, admission)
            continue
        if rel.endswith(".sh"):
            for start, body in heredocs(data.decode("utf-8", "replace")):
                text = "\n" * start + body  # the body's lines where the script has them
                _objects(load_bytes(text.encode(), rel, FILE_MAX).documents, rel, known, objects, admission)
            continue
        for _kind, suffix, read in NODE_POOL_FILES:
            if rel.endswith(suffix):
                text = data.decode("utf-8", "replace")
                pools.extend(node_pool_file_reader(read)(text, rel, os.path.join(root, rel)))
    pools.extend(_read_objects(objects, known))
    return Cluster(tuple(pools), admission if admission else None)


def _objects(docs: list[Document], rel: str, known: Known, objects: list, admission: Admission) -> None:
    """Sort a file's objects: templates a pool names, pool definitions, admission objects."""
    from kvlint.extract.registry import NODE_POOL_TEMPLATES, node_pool_reader

    for doc in docs:
        if isinstance(doc.root, Mapping):
            kind = str(doc.root.value("kind") or "")
            if kind in NODE_POOL_TEMPLATES:
                known.setdefault(kind, {})[_name(doc.root)] = doc.root
            elif node_pool_reader(doc.root) is not None:
                objects.append((rel, doc.root))
            else:
                admission.add(doc.root, rel)


def _read_objects(objects: list[tuple[str, Mapping]], known: Known) -> list[Pool]:
    from kvlint.extract.registry import node_pool_reader

    out: list[Pool] = []
    for rel, obj in objects:
        reader = node_pool_reader(obj)
        if reader is not None:
            out.extend(reader(obj, rel, known))
    return out


def _name(root: Mapping) -> str:
    node = root.at("metadata", "name")
    return str(node.value) if isinstance(node, Scalar) else ""


def _files(root: str, budget: list[int]):
    """(path relative to root, bytes) of the candidate files, breadth-first, within the budget."""
    queue = [("", 0)]
    suffixes = tuple(MARKERS)
    while queue:
        rel_dir, depth = queue.pop(0)
        full = os.path.join(root, rel_dir)
        try:
            entries = sorted(os.scandir(full), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if budget[0] <= 0 or budget[1] <= 0:
                return
            rel = os.path.join(rel_dir, entry.name)
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") or entry.name in SKIP_DIRS or depth + 1 > WALK_DEPTH:
                    continue
                if any(os.path.lexists(os.path.join(entry.path, m)) for m in (".git", *CONFIG_NAMES)):
                    continue  # a repository of its own
                queue.append((rel, depth + 1))
            elif entry.is_file(follow_symlinks=False) and entry.name.endswith(suffixes):
                budget[0] -= 1
                try:
                    data = read_regular(entry.path, FILE_MAX)
                except OSError:
                    continue
                budget[1] -= len(data)
                yield rel, data


def attach(
    d: Deployment, levels: tuple[tuple[Pool, ...], ...], admitted: tuple[Variant, ...] = ()
) -> Deployment:
    """Place a workload that states no GPU on the GPU its pools give (see the module docstring): the
    nearest level with a GPU pool it lands on, else the nearest with any pool it lands on, with what
    admission adds to its placement (`admitted`). A new record: `d`, as extracted, is not written."""
    if not levels or d.gpu is not None or d.accelerator != "gpu" or d.gpu_candidates is not None:
        return d
    wants_gpu = d.gpus_per_pod is None or int(d.gpus_per_pod.value or 0) > 0
    matched, gpu_pools = _landing(d, levels, wants_gpu, admitted)
    placed: dict[str, Any] = {}
    if matched:
        placed["node_pools"] = inferred(tuple(gpu_pools or matched), "node pools it can land on")
    # a GPU count kvlint could not read (KV005 says why, e.g. a fraction) is no claim that it wants none
    unread = "gpus_per_pod" in d.unreadable
    if matched and wants_gpu and not gpu_pools and not unread:
        names = ", ".join(p.label() for p in matched)
        placed["pools_without_gpu"] = inferred(names, "node pools whose node types carry no GPU")
    known = [p for p in gpu_pools if p.gpus]
    if known:
        via = [a.source for a in admitted if lands_on(d, tuple(known), (a,))]
        placed.update(_place(known, f", admitted through {', '.join(via)}" if via else ""))
    return replace(d, **placed).freeze()


def _landing(
    d: Deployment, levels: tuple[tuple[Pool, ...], ...], wants_gpu: bool, admitted: tuple[Variant, ...]
) -> tuple[list, list]:
    """The pools of the nearest level the workload lands on (one with a GPU pool first, when it asks
    for GPUs), and those of them that may carry a GPU."""
    tried = [lands_on(d, level, admitted) for level in levels]
    with_gpu = [m for m in tried if any(p.has_gpu is not False for p in m)] if wants_gpu else []
    matched = with_gpu[0] if with_gpu else next((m for m in tried if m), [])
    gpu_pools = [p for p in matched if p.has_gpu is not False] if wants_gpu else matched
    return matched, gpu_pools


def _place(known: list[Pool], via: str) -> dict[str, Any]:
    """One GPU type among the pools: that GPU; several: the candidates, checked like a fleet."""
    types: dict[str, list[Pool]] = {}
    for pool in known:
        for gid, _n in pool.gpus:
            if pool not in types.setdefault(gid, []):
                types[gid].append(pool)
    if len(types) == 1:
        gid = next(iter(types))
        names = ", ".join(p.label() for p in types[gid])
        note = f"from the node pool{'s' if len(types[gid]) > 1 else ''} it can land on: {names}{via}"
        return {"gpu": inferred(gid, note)}
    note = (
        f"the node pool{'s' if len(known) > 1 else ''} it can land on ("
        + ", ".join(p.label() for p in known)
        + f"){via}"
    )
    fix = inferred("select one pool (a nodeSelector on its label), or name the GPU", "node pools")
    return {"gpu_candidates": Value(tuple(types), "inferred", None, note), "gpu_candidates_fix": fix}


def cite(r, found: list, capacity_rules: set[str]) -> list:
    """The capacity findings of a workload placed by its node pools name the pool definitions used."""
    d = r.deployment
    if d.node_pools is None:
        return found
    if d.gpu is not None:  # attach() placed it: it gives pools only to a workload that names no GPU
        line = f"GPU {d.gpu.note}"
    elif d.gpu_candidates is not None:
        line = f"GPUs of {d.gpu_candidates.note}"
    else:
        return found
    from kvlint.record import replace

    return [replace(f, details=(*f.details, line)) if f.rule in capacity_rules else f for f in found]
