"""extract: YAML documents -> Deployments (one module per input kind) plus located issues."""

from __future__ import annotations

from kvlint.deployment import Deployment
from kvlint.findings import Issue
from kvlint.load.compose import Document
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping


def is_spec(root: Mapping) -> bool:
    """kvlint's own ServingSpec: `kind: ServingSpec`, or top-level `model` and `gpu` outside Kubernetes."""
    return root.value("kind") == "ServingSpec" or (
        "model" in root and "gpu" in root and "apiVersion" not in root
    )


def extract_document(
    doc: Document, path: str, base_dir: str, lines: list[str], nearby: Nearby | None = None
) -> tuple[list[Deployment], list[Issue]]:
    """Every serving workload in one document, each number range-checked (extract/pod/bounded.py).
    Documents that serve no model give nothing."""
    from kvlint.extract.pod import bounded

    deployments, issues = _extract(doc, path, base_dir, lines, nearby)
    for d in deployments:
        bounded.check(d)
    return deployments, issues


def _extract(
    doc: Document, path: str, base_dir: str, lines: list[str], nearby: Nearby | None
) -> tuple[list[Deployment], list[Issue]]:
    root = doc.root
    if not isinstance(root, Mapping):
        return [], []
    if is_spec(root):
        from kvlint.extract.kinds import spec  # pydantic: imported only when a spec is present

        return spec.extract(root, path, base_dir)
    from kvlint.extract import registry

    if isinstance(root.value("apiVersion"), str) and isinstance(root.value("kind"), str):
        return registry.extract_object(root, path, base_dir, lines, nearby), []
    return registry.extract_other(root, path, base_dir, lines), registry.document_issues(root, path)
