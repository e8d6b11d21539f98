"""extract: YAML documents -> Deployments (one module per input kind) plus located issues."""

from __future__ import annotations

from kvlint.deployment import Deployment
from kvlint.findings import Issue
from kvlint.load.compose import Document
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping

# the top-level keys of kvlint's ServingSpec (extract/kinds/spec.py ServingSpec.model_fields, which
# tests/test_spec_kind.py holds this to), kept here so that telling a spec needs no pydantic import
SPEC_KEYS = frozenset(
    [
        "apiVersion",
        "kind",
        "name",
        "engine",
        "engine_version",
        "model",
        "gpu",
        "gpus",
        "tensor_parallel",
        "pipeline_parallel",
        "data_parallel",
        "max_context",
        "max_sequences",
        "max_batched_tokens",
        "dtype",
        "quantization",
        "kv_cache_dtype",
        "gpu_memory_utilization",
        "block_size",
        "enforce_eager",
        "hybrid_kv_cache_manager",
        "architecture",
        "budget",
    ]
)


def is_spec(root: Mapping) -> bool:
    """kvlint's own ServingSpec: `kind: ServingSpec`; without a kind, a document of `model`, `gpu` and only
    spec keys. Another file with top-level `model:` and `gpu:` (a chart's values.yaml beside its
    `image:`, `service:`, `resources:`) is not one: its keys are the chart's, not kvlint's."""
    if "kind" in root:
        return root.value("kind") == "ServingSpec"
    return "model" in root and "gpu" in root and all(k in SPEC_KEYS for k in root.values)


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
    return registry.extract_other(root, path, base_dir, lines, nearby), registry.document_issues(root, path)
