"""The GPU the cluster gives: node-pool definitions found in the repository, matched to workloads.

Where: the repository root is the closest directory above the linted file that holds `.git` or a
kvlint configuration file (`.kvlint.yaml`), at most ROOT_DEPTH levels up; with none, no cluster
definition is read. Under the root, files are walked (no symlink followed, hidden and dependency
folders skipped, a folder that is its own repository skipped) to WALK_DEPTH levels, at most
FILES_MAX files and BYTES_MAX bytes read, each directory listed once per run: YAML objects the
registry names (extract/registry.py NODE_POOL_KINDS), Terraform and ARM files.

Matching: a workload lands on a pool when every nodeSelector / required node-affinity `In` term
is met by the labels the pool's nodes carry (or may carry: Karpenter requirements, instance-type
and GPU labels), and it tolerates each NoSchedule / NoExecute taint (a taint keyed by a resource the
pod requests, nvidia.com/gpu, is tolerated: ExtendedResourceToleration). A pod asking for GPUs does
not land on a pool whose node types carry none. One GPU type among the pools -> that GPU (inferred,
the note names the pool file:line); several -> checked on each (run/fleet.py); GPU pools none.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kvlint.catalog import gpus as catalog
from kvlint.deployment import Deployment, Value, inferred
from kvlint.extract.kinds.node_pools import Pool
from kvlint.extract.pod import gpu_selectors
from kvlint.fileio import nearest_up, read_regular
from kvlint.load import load_bytes
from kvlint.load.compose import Document
from kvlint.load.tree import Mapping, Scalar
from kvlint.record import replace

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
)
_YAML_MARKERS = tuple(g.encode() for g in POOL_GROUPS)
# what a file must contain to be parsed at all, by suffix (the readers check the same again)
MARKERS: dict[str, tuple[bytes, ...]] = {
    ".yaml": _YAML_MARKERS,
    ".yml": _YAML_MARKERS,
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


@lru_cache(maxsize=16)
def repository_pools(root: str) -> tuple[Pool, ...]:
    """Every pool defined under the root (file paths relative to it); the walk is bounded, and the
    readers load only when a file names a node-pool kind."""
    budget = [FILES_MAX, BYTES_MAX]
    candidates = [
        (rel, data)
        for rel, data in _files(root, budget)
        if any(m in data for m in MARKERS[os.path.splitext(rel)[1]])
    ]
    if not candidates:
        return ()
    from kvlint.extract.registry import (
        NODE_POOL_FILES,
        NODE_POOL_TEMPLATES,
        node_pool_file_reader,
        node_pool_reader,
    )

    objects: list[tuple[str, Mapping]] = []
    known: Known = {}
    pools: list[Pool] = []
    for rel, data in candidates:
        if rel.endswith(YAML):
            for doc in load_bytes(data, rel, FILE_MAX).documents:
                if isinstance(doc.root, Mapping):
                    kind = str(doc.root.value("kind") or "")
                    if kind in NODE_POOL_TEMPLATES:
                        known.setdefault(kind, {})[_name(doc.root)] = doc.root
                    elif node_pool_reader(doc.root) is not None:
                        objects.append((rel, doc.root))
            continue
        for _kind, suffix, read in NODE_POOL_FILES:
            if rel.endswith(suffix):
                text = data.decode("utf-8", "replace")
                pools.extend(node_pool_file_reader(read)(text, rel, os.path.join(root, rel)))
    for rel, obj in objects:
        reader = node_pool_reader(obj)
        if reader is not None:
            pools.extend(reader(obj, rel, known))
    return tuple(pools)


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


# ---- matching


def _selector_met(pool: Pool, key: str, values: list[str]) -> bool:
    if key in pool.labels:
        return pool.labels[key] in values
    if key in pool.allowed:
        return bool(set(pool.allowed[key]) & set(values))
    if key in gpu_selectors.INSTANCE_KEYS:
        return bool(set(pool.instance_types) & set(values))
    if key in gpu_selectors.GPU_KEYS:
        specs = {s.id for v in values if (s := catalog.label_gpu(key, v)) is not None}
        return not pool.gpus or bool(specs & {g for g, _n in pool.gpus})
    if key.startswith(("karpenter.k8s.aws/", "karpenter.sh/")) and pool.kind.startswith("Karpenter"):
        return True  # a well-known label Karpenter sets from the instance it picks
    # labels every node carries whatever the pool (kubernetes.io/os, arch, zones)
    return key.startswith(("kubernetes.io/", "topology.kubernetes.io/", "beta.kubernetes.io/"))


def _tolerated(taint: tuple[str, str, str], tolerations: list[dict[str, str]], resources: set[str]) -> bool:
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


def lands_on(d: Deployment, pools: tuple[Pool, ...]) -> list[Pool]:
    placement = d.placement
    labels, tolerations = placement.value if placement is not None else ([], [])
    resources = {d.gpus_per_pod.note} if d.gpus_per_pod is not None and d.gpus_per_pod.note else set()
    out = []
    for pool in pools:
        if not all(_selector_met(pool, k, v) for k, v in labels):
            continue
        if not all(_tolerated(t, tolerations, resources) for t in pool.taints):
            continue
        out.append(pool)
    return out


def attach(d: Deployment, levels: tuple[tuple[Pool, ...], ...]) -> Deployment:
    """Place a workload that states no GPU on the GPU its pools give (see the module docstring): the
    nearest level with a GPU pool it lands on, else the nearest with any pool it lands on. A new record:
    `d`, as extracted, is not written."""
    if not levels or d.gpu is not None or d.accelerator != "gpu" or d.gpu_candidates is not None:
        return d
    wants_gpu = d.gpus_per_pod is None or int(d.gpus_per_pod.value or 0) > 0
    matched, gpu_pools = _landing(d, levels, wants_gpu)
    placed: dict[str, Any] = {}
    if matched:
        placed["node_pools"] = inferred(tuple(gpu_pools or matched), "node pools it can land on")
    if matched and wants_gpu and not gpu_pools:
        names = ", ".join(p.label() for p in matched)
        placed["pools_without_gpu"] = inferred(names, "node pools whose node types carry no GPU")
    known = [p for p in gpu_pools if p.gpus]
    if known:
        placed.update(_place(known))
    return replace(d, **placed).freeze()


def _landing(d: Deployment, levels: tuple[tuple[Pool, ...], ...], wants_gpu: bool) -> tuple[list, list]:
    """The pools of the nearest level the workload lands on (one with a GPU pool first, when it asks
    for GPUs), and those of them that may carry a GPU."""
    tried = [lands_on(d, level) for level in levels]
    with_gpu = [m for m in tried if any(p.has_gpu is not False for p in m)] if wants_gpu else []
    matched = with_gpu[0] if with_gpu else next((m for m in tried if m), [])
    gpu_pools = [p for p in matched if p.has_gpu is not False] if wants_gpu else matched
    return matched, gpu_pools


def _place(known: list[Pool]) -> dict[str, Any]:
    """One GPU type among the pools: that GPU; several: the candidates, checked like a fleet."""
    types: dict[str, list[Pool]] = {}
    for pool in known:
        for gid, _n in pool.gpus:
            if pool not in types.setdefault(gid, []):
                types[gid].append(pool)
    if len(types) == 1:
        gid = next(iter(types))
        names = ", ".join(p.label() for p in types[gid])
        note = f"from the node pool{'s' if len(types[gid]) > 1 else ''} it can land on: {names}"
        return {"gpu": inferred(gid, note)}
    note = (
        f"the node pool{'s' if len(known) > 1 else ''} it can land on ("
        + ", ".join(p.label() for p in known)
        + ")"
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
