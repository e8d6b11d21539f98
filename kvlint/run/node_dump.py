"""The GPUs of a `kubectl get nodes -o json` dump (a file: kvlint never talks to a cluster).

The dump is a v1 List whose items are Nodes (Kubernetes API reference, "Node v1 core"): each
node's `metadata.labels` and `status.capacity`. A node's GPU is read from, in this order:
- `nvidia.com/gpu.product`, set by NVIDIA GPU feature discovery (the GPU operator's GFD: the
  nvidia-smi product name with spaces as '-', e.g. NVIDIA-L4, NVIDIA-A100-SXM4-80GB; NVIDIA
  k8s-device-plugin docs/gpu-feature-discovery/README.md, "Generated Labels");
- `cloud.google.com/gke-accelerator`, set by GKE on GPU nodes (nvidia-l4, nvidia-tesla-t4,
  nvidia-h100-80gb; GKE docs "About GPUs in GKE", cloud.google.com/kubernetes-engine/docs/concepts/gpus);
- `node.kubernetes.io/instance-type`, the well-known label the cloud provider sets (g6.xlarge,
  p4d.24xlarge; kubernetes.io/docs/reference/labels-annotations-taints/#nodekubernetesioinstance-type),
  through kvlint's instance catalog.
A node with none of these and no `nvidia.com/gpu` capacity carries no GPU and is left out.
"""

from __future__ import annotations

from kvlint.catalog import gpus as catalog
from kvlint.catalog.gpus import GpuSpec
from kvlint.fileio import read_regular
from kvlint.load import load_bytes
from kvlint.load.tree import Mapping, Node, Scalar, Sequence

MAX_BYTES = 64 * 1024 * 1024  # a dump of a few thousand nodes is a few tens of MB
LABELS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator", "node.kubernetes.io/instance-type")


class DumpError(Exception):
    """A --nodes file kvlint cannot read as a node list, located (file:line:column)."""


def _text(node: Node | None) -> str | None:
    return str(node.value) if isinstance(node, Scalar) and node.value is not None else None


def _gpu(key: str, value: str) -> GpuSpec | None:
    if key == "node.kubernetes.io/instance-type":
        hit = catalog.instance(value)
        return hit[0] if hit is not None else None
    return catalog.label_gpu(key, value)


def read_nodes(path: str) -> tuple[list[tuple[GpuSpec, str]], list[str]]:
    """([(GPU, 'file:line: node NAME, LABEL=VALUE')], notes on GPU nodes whose GPU is not known)."""
    try:
        data = read_regular(path, MAX_BYTES)
    except OSError as exc:
        why = exc.strerror or str(exc).removeprefix(f"{path}: ")
        raise DumpError(f"{path}: cannot read: {why}") from None
    loaded = load_bytes(data, path, MAX_BYTES)
    if loaded.issues:
        raise DumpError(f"{loaded.issues[0].where}: {loaded.issues[0].message}")
    root = loaded.documents[0].root if loaded.documents else None
    if not isinstance(root, Mapping):
        raise DumpError(f"{path}:1:1: not the output of `kubectl get nodes -o json` (a List of Nodes)")
    items = root.get("items") if _text(root.get("kind")) == "List" else None
    if not isinstance(items, Sequence):
        at = f"{path}:{root.line + 1}:{root.col + 1}"
        raise DumpError(f"{at}: not the output of `kubectl get nodes -o json`: no `kind: List` with `items`")
    found: list[tuple[GpuSpec, str]] = []
    notes: list[str] = []
    for item in items:
        if not isinstance(item, Mapping) or _text(item.get("kind")) not in ("Node", None):
            continue
        name = _text(item.at("metadata", "name")) or "?"
        labels = item.at("metadata", "labels")
        capacity = _text(item.at("status", "capacity", "nvidia.com/gpu"))
        hit = _node_gpu(labels, path, name)
        if hit is not None:
            found.append(hit)
        elif capacity not in (None, "0"):
            at = f"{path}:{item.line + 1}"
            notes.append(
                f"{at}: node {name} has {capacity} nvidia.com/gpu but no label names a GPU kvlint knows"
            )
    return found, notes


def _node_gpu(labels: Node | None, path: str, name: str) -> tuple[GpuSpec, str] | None:
    if not isinstance(labels, Mapping):
        return None
    for key in LABELS:
        value = _text(labels.get(key))
        spec = _gpu(key, value) if value else None
        if spec is not None:
            node = labels.get(key)
            line = node.line + 1 if node is not None else labels.line + 1
            return spec, f"{path}:{line}: node {name}, {key}={value}"
    return None
