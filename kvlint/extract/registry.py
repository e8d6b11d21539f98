"""Every input kind kvlint reads, in one place.

Kubernetes objects are dispatched on `kind`; documents without apiVersion/kind are tried against
each detector in order (the first that claims the document extracts it; Helm values last). Entries
name "module:function" inside kvlint.extract and are imported only when used, so the pre-commit
path loads just the readers a file needs, and no reader imports another to find it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# kind -> reader(ctx: ObjectContext) -> list[Deployment]
KUBERNETES_KINDS: dict[str, str] = {
    "LeaderWorkerSet": "kubernetes:lws",
    "InferenceService": "kubernetes:kserve_isvc",
    "ServingRuntime": "kubernetes:kserve_runtime",
    "ClusterServingRuntime": "kubernetes:kserve_runtime",
    "LLMInferenceService": "kubernetes:llm_isvc",
    "Model": "kubernetes:kubeai_model",
    "RayService": "ray:extract",
    "RayCluster": "ray:extract",
    "RayJob": "ray:extract",
    "NIMService": "kubernetes:nim_service",
    "Workspace": "kubernetes:kaito",
    "VLLMRuntime": "kubernetes:vllm_runtime",
    "DynamoGraphDeployment": "dynamo:extract",
}

# (name, detector(root) -> bool, reader(root, path, base_dir, lines) -> list[Deployment]), in order
DOCUMENT_KINDS: list[tuple[str, str, str]] = [
    ("skypilot", "skypilot:is_skypilot", "skypilot:extract"),
    ("vllm-config", "vllm_config:is_vllm_config", "vllm_config:extract"),
    ("docker-compose", "compose:is_compose", "compose:extract"),
    ("ray-serve-config", "ray_serve:is_serve_config", "ray_serve:extract"),
    ("llm-d-modelservice", "llmd_values:is_modelservice", "llmd_values:extract"),
    ("helm-values", "helm_values:always", "helm_values:extract"),
]


def resolve(ref: str) -> Callable[..., Any]:
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(f"kvlint.extract.{module}"), name)


def kubernetes_reader(kind: str) -> Callable[..., Any] | None:
    ref = KUBERNETES_KINDS.get(kind)
    return resolve(ref) if ref else None
