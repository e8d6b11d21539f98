"""Node pools in Terraform files and ARM templates.

Terraform is parsed with python-hcl2 (imported only when a .tf file is read: it costs ~0.2 s):
- `aws_eks_node_group`: instance_types, labels, taint blocks, scaling_config.max_size
  (registry.terraform.io/providers/hashicorp/aws, resource eks_node_group);
- `google_container_node_pool`: node_config.machine_type, node_config.guest_accelerator
  {type, count}, node_config.labels / taint, autoscaling.max_node_count (hashicorp/google);
- `azurerm_kubernetes_cluster_node_pool` and `azurerm_kubernetes_cluster.default_node_pool`:
  vm_size, node_labels, node_taints, max_count (hashicorp/azurerm);
- modules' `eks_managed_node_groups` / `self_managed_node_groups` maps (terraform-aws-modules/eks:
  instance_types, labels, taints, max_size);
- modules' `node_pools` list (terraform-google-modules/kubernetes-engine, v38.0.0
  modules/private-cluster-update-variant/cluster.tf: machine_type :852, guest_accelerator from
  accelerator_type / accelerator_count :965-969, labels node_pool = name plus node_pools_labels["all"]
  and [name] :883-885, taints node_pools_taints["all"] and [name] :906-907, max_count :785), read where
  the list is literal or a variable / local the module states;
- node-pool objects the file carries as Kubernetes objects (kvlint/load/terraform.py).
`var.x` / `local.x` are filled where the module states them (a default, a tfvars value, a local) and
expressions are evaluated (load/terraform_eval.py: for expressions, conditionals, concat, merge, lookup,
try ...); a resource with `for_each` is one pool per element, its `dynamic "guest_accelerator"` blocks
written out (load/terraform_instances.py); a call of a module kept in the repository gives the pools that
module defines with the call's arguments, located at the call (load/terraform_modules.py). A value
Terraform computes from what the repository does not state (`module.x`, `data.x`, a `-var-file`) stays
unknown: it is left out.
ARM / Bicep-compiled JSON: Microsoft.ContainerService/managedClusters agentPoolProfiles and
managedClusters/agentPools resources (vmSize, nodeLabels, nodeTaints, maxCount).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from kvlint.extract.kinds.node_pools import Pool, add_types, gke_pool, taint_text
from kvlint.findings import Location

POOLS_MAX = 200  # pools read from one file (a module call's included)
_CALLS_DEPTH = 3  # modules of the repository calling modules
_CALLS_MAX = 16  # module calls read for one file, nested ones included
_CALL_BYTES_MAX = 8 << 20  # and the bytes of the module files they read
_POOL_RESOURCES = (
    "aws_eks_node_group",
    "google_container_node_pool",
    "azurerm_kubernetes_cluster_node_pool",
    "azurerm_kubernetes_cluster",
)


def _literal(v: Any) -> str | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, str):
        s = v.strip().strip('"')
        return None if "${" in s or re.match(r"^(var|local|module|data)\.", s) else s
    return None


def _strings(v: Any) -> list[str]:
    items = v if isinstance(v, list) else [v]
    return [s for s in (_literal(i) for i in items) if s]


def _int(v: Any) -> int | None:
    s = _literal(v)
    return int(s) if s is not None and s.isdigit() else None


def _block(v: Any) -> dict[str, Any]:
    if isinstance(v, list):
        v = v[0] if v else {}
    return v if isinstance(v, dict) else {}


def _labels(v: Any) -> dict[str, str]:
    return {
        str(k).strip('"'): s
        for k, x in _block(v).items()
        if (s := _literal(x)) is not None and k != "__is_block__"
    }


def _taints(v: Any) -> tuple[tuple[str, str, str], ...]:
    items = (
        list(v.values())
        if isinstance(v, dict) and "__is_block__" not in v
        else (v if isinstance(v, list) else [])
    )
    out = []
    for t in items:
        if isinstance(t, dict):
            out.append(
                taint_text(
                    f"{_literal(t.get('key')) or ''}={_literal(t.get('value')) or ''}:{_literal(t.get('effect')) or ''}"
                )
            )
        elif (s := _literal(t)) is not None:
            out.append(taint_text(s))
    return tuple(out)


class _Lines:
    """Where a named block starts: the first line after `after` that names it."""

    def __init__(self, source: str, path: str) -> None:
        self.lines = source.splitlines()
        self.path = path

    def find(self, pattern: str, after: int = 0) -> Location:
        return self.search(pattern, after) or Location(self.path, after + 1, 1)

    def search(self, pattern: str, after: int = 0) -> Location | None:
        rx = re.compile(pattern)
        for i in range(after, len(self.lines)):
            if rx.search(self.lines[i]):
                return Location(self.path, i + 1, 1)
        return None


def read(source: str, path: str, real_path: str | None = None) -> list[Pool]:
    """The node pools of one Terraform file ([] when it does not parse): its node-pool resources and
    modules, then the node-pool objects it carries (kvlint/load/terraform.py: Karpenter NodePools in
    kubectl_manifest / kubernetes_manifest, and the data-addons module's karpenter-resources values).
    `var.x` / `local.x` are what the module beside `real_path` states (load/terraform_names.py, the
    resolver the workload reader uses too)."""
    out = _resources(source, path, real_path) if re.search(r"node_group|node_pool", source) else []
    if "karpenter" in source:
        out.extend(_carried(source, path, real_path))
    return out


def _carried(source: str, path: str, real_path: str | None) -> list[Pool]:
    from kvlint.extract.registry import node_pool_reader
    from kvlint.load import terraform as tf_objects

    out: list[Pool] = []
    for root in tf_objects.objects(source, path, real_path):
        reader = node_pool_reader(root)
        if reader is not None:
            out.extend(reader(root, path, {}))
    return out


def _resources(source: str, path: str, real_path: str | None) -> list[Pool]:
    from kvlint.load import terraform as tf_objects

    tree = _strip_parse(source)
    if tree is None:
        return []
    calls = [_CALLS_MAX, _CALL_BYTES_MAX]  # what the module calls it leads to may read, together
    return _tree_pools(tree, tf_objects.known(source, real_path), _Lines(source, path), real_path, (), calls)


def _strip_parse(source: str) -> dict[str, Any] | None:
    try:
        import hcl2
        from hcl2.utils import SerializationOptions
    except ImportError:  # the optional dependency is absent: Terraform is not read
        return None
    try:
        return hcl2.loads(source, serialization_options=SerializationOptions(strip_string_quotes=True))
    except Exception:  # noqa: BLE001 - python-hcl2 raises lark's and its own errors: the file is skipped
        return None


def _tree_pools(
    tree: dict[str, Any],
    known: dict[str, Any],
    lines: _Lines,
    real_path: str | None,
    trail: tuple[str, ...],
    calls: list[int],
) -> list[Pool]:
    """The pools of one parsed file, its values evaluated with `known` (load/terraform_eval.py): one
    per instance of a resource or module with `for_each`, dynamic blocks written out
    (load/terraform_instances.py), and the pools of a module of the repository it calls."""
    from kvlint.load import terraform_eval as tf_eval
    from kvlint.load.terraform_files import reader
    from kvlint.load.terraform_instances import instances

    scope = tf_eval.Scope(known, files=reader(real_path) if real_path else None)
    out: list[Pool] = []
    for block in tree.get("resource", []):
        for rtype, named in block.items():
            for name, body in named.items() if isinstance(named, dict) and rtype in _POOL_RESOURCES else ():
                at = lines.find(rf'resource\s+"?{re.escape(rtype)}"?\s+"?{re.escape(name)}"?')
                for key, instance in instances(_block(body), scope):
                    label = name if key is None else f"{name}[{key}]"
                    out.extend(_resource(rtype, label, instance, at, lines))
    for block in tree.get("module", []):
        for mname, body in block.items():
            at = lines.find(rf'module\s+"?{re.escape(mname)}"?')
            for _key, call in instances(_block(body), scope):
                found = _module_pools(call, at, lines)
                if not found and real_path is not None and len(trail) < _CALLS_DEPTH:
                    found = _called(call, mname, at, real_path, trail, calls)
                out.extend(found)
    return out[:POOLS_MAX]


def _module_pools(call: dict[str, Any], at: Location, lines: _Lines) -> list[Pool]:
    """The pools a call of a registry module states: terraform-aws-modules/eks's node groups,
    terraform-google-modules/kubernetes-engine's node_pools (module docstring)."""
    out: list[Pool] = []
    for key in ("eks_managed_node_groups", "self_managed_node_groups"):
        groups = call.get(key)
        for gname, group in groups.items() if isinstance(groups, dict) else ():
            if isinstance(group, dict):
                where = lines.find(rf'^\s*"?{re.escape(gname)}"?\s*=', at.line - 1)
                out.append(_eks_group(gname, group, where, f"terraform-aws-eks {key[:-1]}"))
    out.extend(_gke_module_pools(call, at, lines))
    return out


def _called(
    call: dict[str, Any], mname: str, at: Location, real_path: str, trail: tuple[str, ...], calls: list[int]
) -> list[Pool]:
    """The pools a module of the repository defines for this call (load/terraform_modules.py), located
    at the call: the call is what gives them their values."""
    from kvlint.load import terraform as tf_objects
    from kvlint.load import terraform_modules as tf_modules
    from kvlint.record import replace

    folder = tf_modules.folder(real_path, call.get("source"))
    here = os.path.realpath(os.path.dirname(os.path.abspath(real_path)))
    if folder is None or folder == here or folder in trail or calls[0] <= 0:
        return []  # a module calling itself (or one it is called from): read once
    calls[0] -= 1
    module_files = tf_modules.files(folder, calls)
    known = tf_modules.known(module_files, call, tf_objects._parse, tf_objects._plain)
    out: list[Pool] = []
    for path, text in module_files:
        if not re.search(r"node_group|node_pool|module", text):
            continue
        tree = _strip_parse(text)
        if tree is not None:
            pools = _tree_pools(tree, known, _Lines(text, at.file), path, (*trail, here), calls)
            out.extend(replace(p, where=at, kind=f"{p.kind} (module {mname})") for p in pools)
    return out


def _gke_module_pools(body: dict[str, Any], at: Location, lines: _Lines) -> list[Pool]:
    """The `node_pools` items of a terraform-google-modules/kubernetes-engine module (module docstring)."""
    items = body.get("node_pools")
    if not isinstance(items, list):
        return []
    labels, taints = body.get("node_pools_labels"), body.get("node_pools_taints")
    labels = labels if isinstance(labels, dict) else {}
    taints = taints if isinstance(taints, dict) else {}
    out: list[Pool] = []
    for item in items:
        name = _literal(item.get("name")) if isinstance(item, dict) else None
        if not isinstance(item, dict) or not name:
            continue
        count = _int(item.get("accelerator_count")) or 0
        accel = _literal(item.get("accelerator_type"))
        pattern = rf'name\s*=\s*"{re.escape(name)}"'
        # the item's own line after the module's; else where the file writes it (a variable's default
        # or a local); else, the list computed or read from another file, the module's line
        where = lines.search(pattern, at.line - 1) or lines.search(pattern) or at
        kind = "terraform-google-kubernetes-engine node pool"
        pool = gke_pool(
            name, kind, where, _literal(item.get("machine_type")), [(accel, count)] if accel and count else []
        )
        pool.labels["node_pool"] = name
        for key in ("all", name):
            pool.labels.update(_labels(labels.get(key)))
            pool.taints = (*pool.taints, *_taints(taints.get(key)))
        pool.max_nodes = _int(item.get("max_count")) or _int(item.get("node_count"))
        out.append(pool)
    return out


def _resource(rtype: str, name: str, body: dict[str, Any], at: Location, lines: _Lines) -> list[Pool]:
    if rtype == "aws_eks_node_group":
        group = dict(body)
        group["max_size"] = _block(body.get("scaling_config")).get("max_size")
        group["taints"] = body.get("taint", [])
        pool = _eks_group(
            _literal(body.get("node_group_name")) or name, group, at, "Terraform aws_eks_node_group"
        )
        return [pool]
    if rtype == "google_container_node_pool":
        config = _block(body.get("node_config"))
        accels = [
            (_literal(a.get("type")) or "", _int(a.get("count")) or 1)
            for a in (config.get("guest_accelerator") or [])
            if isinstance(a, dict)
        ]
        pname = _literal(body.get("name")) or name
        pool = gke_pool(
            pname, "Terraform google_container_node_pool", at, _literal(config.get("machine_type")), accels
        )
        if "guest_accelerator" in config.get("__unknown_blocks__", ()):  # a dynamic block not known
            pool.unknown_types = (*pool.unknown_types, "guest_accelerator")
        pool.labels.update(_labels(config.get("labels")))
        pool.taints = (*pool.taints, *_taints(config.get("taint")))
        pool.max_nodes = _int(_block(body.get("autoscaling")).get("max_node_count")) or _int(
            body.get("node_count")
        )
        return [pool]
    if rtype == "azurerm_kubernetes_cluster_node_pool":
        return [
            _aks(
                _literal(body.get("name")) or name, body, at, "Terraform azurerm_kubernetes_cluster_node_pool"
            )
        ]
    if rtype == "azurerm_kubernetes_cluster" and body.get("default_node_pool"):
        dp = _block(body.get("default_node_pool"))
        where = lines.find(r"default_node_pool", at.line - 1)
        return [_aks(_literal(dp.get("name")) or "default", dp, where, "Terraform azurerm default_node_pool")]
    return []


def _eks_group(name: str, group: dict[str, Any], where: Location, kind: str) -> Pool:
    pool = Pool(name, kind, where, labels=_labels(group.get("labels")))
    pool.labels["eks.amazonaws.com/nodegroup"] = name
    pool.taints = _taints(group.get("taints"))
    add_types(pool, _strings(group.get("instance_types")) + _strings(group.get("instance_type")))
    pool.max_nodes = _int(group.get("max_size")) or _int(group.get("desired_size"))
    return pool


def _aks(name: str, body: dict[str, Any], where: Location, kind: str) -> Pool:
    pool = Pool(name, kind, where, labels=_labels(body.get("node_labels")))
    pool.labels.update({"agentpool": name, "kubernetes.azure.com/agentpool": name})
    pool.taints = _taints(body.get("node_taints"))
    add_types(pool, _strings(body.get("vm_size")))
    pool.max_nodes = _int(body.get("max_count")) or _int(body.get("node_count"))
    return pool


def read_arm(source: str, path: str, _real_path: str | None = None) -> list[Pool]:
    """AKS agent pools of an ARM template (JSON)."""
    if "Microsoft.ContainerService" not in source:
        return []
    try:
        data = json.loads(source)
    except ValueError:
        return []
    lines = _Lines(source, path)
    out: list[Pool] = []
    for res in data.get("resources", []) if isinstance(data, dict) else ():
        if not isinstance(res, dict):
            continue
        rtype = str(res.get("type", ""))
        raw = res.get("properties")
        props: dict[str, Any] = raw if isinstance(raw, dict) else {}
        profiles = props.get("agentPoolProfiles", []) if rtype.endswith("/managedClusters") else []
        if rtype.endswith("/managedClusters/agentPools"):
            profiles = [{"name": str(res.get("name", "")).split("/")[-1], **props}]
        for prof in profiles if isinstance(profiles, list) else ():
            if isinstance(prof, dict):
                name = str(prof.get("name") or "agentpool")
                where = lines.find(rf'"name"\s*:\s*"[^"]*{re.escape(name)}"')
                pool = _aks(
                    name,
                    {
                        "vm_size": prof.get("vmSize"),
                        "node_labels": prof.get("nodeLabels"),
                        "node_taints": prof.get("nodeTaints"),
                        "max_count": prof.get("maxCount"),
                        "node_count": prof.get("count"),
                    },
                    where,
                    "ARM AKS agent pool",
                )
                out.append(pool)
    return out
