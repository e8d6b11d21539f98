"""AIBrix labels on serving workloads: the ones AIBrix reads, where it reads them (issue 12 item 4).

Source: vllm-project/aibrix@e3e10f9e, read in place. pkg/constants/model.go defines the `model.aibrix.ai/`
keys (name, engine, metric-port, port, ...); pkg/cache/informers.go watches *pods* and takes the model of
each from the pod's own labels or annotations (constants.ModelNameFromMetadata), so the gateway routes to a
pod only when its template carries `model.aibrix.ai/name`. The Python gpu_optimizer (python/aibrix/aibrix/
gpu_optimizer/app.py) reads `model.aibrix.ai/min_replicas` from the Deployment. Any other
`model.aibrix.ai/<key>` is read by nothing: AIBrix ignores it (Kubernetes accepts any label).
"""

from __future__ import annotations

from kvlint.codes import UNPARSED_SETTING
from kvlint.findings import Issue, Severity
from kvlint.load.tree import Mapping, Node, Sequence

SOURCE = "vllm-project/aibrix@e3e10f9e pkg/constants/model.go, pkg/cache/informers.go"
PREFIX = "model.aibrix.ai/"
KNOWN = frozenset(
    PREFIX + k
    for k in (
        "name",
        "engine",
        "metric-port",
        "port",
        "lora-id",
        "kv-events-enabled",
        "kv-connector-type",
        "sglang-bootstrap-port",
        "service-name",
        "model-router-custom-paths",
        "config",
        "sidecar-injection",
        "sidecar-runtime-image",
        "min_replicas",
    )
)
NAME = PREFIX + "name"


def _node_at(root: Mapping, path: tuple[str, ...]) -> Node | None:
    node: Node | None = root
    for part in path:
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, Sequence) and part.isdigit() and int(part) < len(node.items):
            node = node.items[int(part)]
        else:
            return None
    return node


def _meta(box: Node | None, key: str) -> Mapping | None:
    meta = box.map("metadata") if isinstance(box, Mapping) else None
    return meta.map(key) if meta is not None else None


def _unknown(labels: Mapping | None, path: str) -> list[Issue]:
    out: list[Issue] = []
    if labels is None:
        return out
    for key, _ in labels.items():
        if not key.startswith(PREFIX) or key in KNOWN:
            continue
        from difflib import get_close_matches  # only for a label AIBrix does not read

        close = get_close_matches(key, sorted(KNOWN), n=1, cutoff=0.8)
        out.append(
            Issue(
                UNPARSED_SETTING,
                f"AIBrix reads no label `{key}` ({SOURCE}): it is ignored"
                + (f"; the key AIBrix reads is `{close[0]}`" if close else ""),
                labels.keys[key].where(path),
                fix=f"rename it to `{close[0]}`" if close else "remove it",
                severity=Severity.WARNING,
            )
        )
    return out


# kinds whose own labels Kubernetes does not copy to the pods (a CRD's controller may)
PLAIN = frozenset(["Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job"])


def issues(root: Mapping, spec_path: tuple[str, ...], path: str) -> list[Issue]:
    """For one pod template: AIBrix label keys nothing reads, and a model name label the pods lack."""
    template = _node_at(root, spec_path[:-1]) if spec_path else None
    pod_labels = _meta(template, "labels")
    pod_notes = _meta(template, "annotations")
    own = _meta(root, "labels") if template is not root else None
    out = _unknown(pod_labels, path) + _unknown(own, path)
    on_pod = (pod_labels is not None and NAME in pod_labels) or (pod_notes is not None and NAME in pod_notes)
    plain = root.value("kind") in PLAIN
    if plain and own is not None and NAME in own and not on_pod and template is not None:
        out.append(
            Issue(
                UNPARSED_SETTING,
                f"`{NAME}` is on the workload's own labels but not on its pod template: AIBrix's gateway "
                f"finds a model's pods by the pod's label or annotation ({SOURCE}), so it never routes to "
                "these pods",
                own.keys[NAME].where(path),
                fix=f"add `{NAME}` (and model.aibrix.ai/port) to the pod template's metadata.labels",
                severity=Severity.WARNING,
            )
        )
    return out
