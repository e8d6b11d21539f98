"""Terraform's own Kubernetes resources (hashicorp/kubernetes), as the objects they create, and the
module's variable defaults and locals that fill their values.

`kubernetes_deployment` / `_v1`, `kubernetes_stateful_set` / `_v1`, `kubernetes_daemon_set_v1` /
`kubernetes_daemonset`, `kubernetes_pod` / `_v1`, `kubernetes_job` / `_v1`: nested blocks named in
snake_case (`init_container`, `volume_mount`), one block per list item, become the object's camelCase
fields (registry.terraform.io/providers/hashicorp/kubernetes/latest/docs/resources/deployment_v1:
`container` -> containers, `port` -> ports, `env` -> env, `toleration` -> tolerations ...). A map
attribute (`labels`, `limits = { "nvidia.com/gpu" = 1 }`, `node_selector`) keeps its keys.

`helm_release`: its `values` (YAML strings or yamlencode) merged in order, then each `set` /
`set_string` block's dotted name (registry.terraform.io/providers/hashicorp/helm: later values win,
`set` over values), as one values document.

`var.NAME` and `local.NAME` are filled by terraform_names.py, the one resolver of the .tf readers.
"""

from __future__ import annotations

import re
from typing import Any

WORKLOAD_KINDS = {
    "kubernetes_deployment": ("apps/v1", "Deployment"),
    "kubernetes_deployment_v1": ("apps/v1", "Deployment"),
    "kubernetes_stateful_set": ("apps/v1", "StatefulSet"),
    "kubernetes_stateful_set_v1": ("apps/v1", "StatefulSet"),
    "kubernetes_daemonset": ("apps/v1", "DaemonSet"),
    "kubernetes_daemon_set_v1": ("apps/v1", "DaemonSet"),
    "kubernetes_pod": ("v1", "Pod"),
    "kubernetes_pod_v1": ("v1", "Pod"),
    "kubernetes_job": ("batch/v1", "Job"),
    "kubernetes_job_v1": ("batch/v1", "Job"),
}
# blocks that stand for one item of a list field (the provider's schema: TypeList of a resource)
_LISTS = {
    "container": "containers",
    "init_container": "initContainers",
    "env": "env",
    "env_from": "envFrom",
    "port": "ports",
    "volume_mount": "volumeMounts",
    "volume": "volumes",
    "toleration": "tolerations",
    "image_pull_secrets": "imagePullSecrets",
    "node_selector_term": "nodeSelectorTerms",
    "match_expressions": "matchExpressions",
    "preferred_during_scheduling_ignored_during_execution": "preferredDuringSchedulingIgnoredDuringExecution",
    "topology_spread_constraint": "topologySpreadConstraints",
    "host_aliases": "hostAliases",
    "items": "items",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _is_block(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(b, dict) and b.get("__is_block__") for b in v)


def from_blocks(body: dict[str, Any], plain) -> dict[str, Any]:
    """A block's attributes and nested blocks as the Kubernetes fields they set (`plain` turns an
    attribute's HCL value into plain data)."""
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key.startswith("__"):
            continue
        if _is_block(value):
            items = [from_blocks(b, plain) for b in value]
            if key in _LISTS:
                out.setdefault(_LISTS[key], []).extend(items)
            else:
                out[_camel(key)] = items[0]
        else:
            out[_camel(key)] = plain(value)
    return out


def workload(rtype: str, body: dict[str, Any], plain) -> dict[str, Any] | None:
    """The object a hashicorp/kubernetes workload resource creates, None for other resources."""
    kind = WORKLOAD_KINDS.get(rtype)
    if kind is None:
        return None
    return {"apiVersion": kind[0], "kind": kind[1], **from_blocks(body, plain)}


def helm_values(body: dict[str, Any], plain, documents) -> dict[str, Any] | None:
    """A helm_release's values in force (module docstring); `documents` reads one `values` entry."""
    merged: dict[str, Any] = {}
    for entry in body.get("values") or []:
        for doc in documents(entry):
            if isinstance(doc, dict):
                _merge(merged, doc)
    for key in ("set", "set_string"):
        for item in body.get(key) or []:
            if isinstance(item, dict) and isinstance(name := plain(item.get("name")), str):
                value = plain(item.get("value"))
                _set(merged, name, _typed(value) if key == "set" else value)
    return merged or None


def _typed(value: Any) -> Any:
    """A `set` value as Helm types it: digits an integer, true/false a boolean, else the string
    (helm.sh/helm/v3 pkg/strvals/parser.go typedVal; `set_string` keeps the string)."""
    if isinstance(value, str):
        if re.fullmatch(r"-?[1-9]\d*|0", value):
            return int(value)
        if value in ("true", "false"):
            return value == "true"
    return value


def _merge(into: dict[str, Any], other: dict[str, Any]) -> None:
    for k, v in other.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def _set(into: dict[str, Any], dotted: str, value: Any) -> None:
    """Helm's --set path: dots split keys (a backslash escapes one), `name[0]` indexes a list."""
    parts = [p.replace("\0", ".") for p in dotted.replace("\\.", "\0").split(".")]
    node: Any = into
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        m = re.fullmatch(r"(.*)\[(\d+)\]", part)
        key, index = (m.group(1), int(m.group(2))) if m else (part, None)
        if index is None:
            if last:
                node[key] = value
                return
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
            continue
        seq = node.setdefault(key, [])
        if not isinstance(seq, list) or index > 64:
            return
        seq.extend({} for _ in range(index + 1 - len(seq)))
        if last:
            seq[index] = value
            return
        if not isinstance(seq[index], dict):
            seq[index] = {}
        node = seq[index]
