"""extract: YAML documents -> Deployments (one module per input kind) plus located issues."""

from __future__ import annotations

from kvlint.deployment import Deployment
from kvlint.findings import Issue
from kvlint.load.compose import Document
from kvlint.load.tree import Mapping


def extract_document(doc: Document, path: str, base_dir: str) -> tuple[list[Deployment], list[Issue]]:
    """Every serving workload in one document. Documents that serve no model give nothing."""
    root = doc.root
    if not isinstance(root, Mapping):
        return [], []
    from kvlint.extract import spec

    if spec.is_spec(root):
        return spec.extract(root, path, base_dir)
    from kvlint.extract import kubernetes

    return kubernetes.extract(root, path, base_dir)
