"""Every input kind kvlint reads, in one place.

Kubernetes objects are dispatched on `kind` (a kind not listed is read as pod templates); documents
without apiVersion/kind are tried against each detector in order, the first that claims the document
extracts it, Helm values last. kvlint's own ServingSpec is recognised before both (extract/__init__).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from kvlint.deployment import Deployment
from kvlint.findings import Issue
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping

if TYPE_CHECKING:
    from kvlint.extract.kinds import node_pool_kinds, node_pools
    from kvlint.extract.pod import container

# Every reader is named "module:function" of kvlint/extract/kinds/ and imported the first time a
# document needs it, so a run pays only for the kinds its files hold: a one-file pre-commit run on a
# Deployment imports the pod readers, not the Helm-values layouts, Compose or KServe
# (tests/test_speed.py checks which modules a one-file run imports).
ObjectReader = Callable[["container.ObjectContext"], list[Deployment]]
DocumentReader = Callable[[Mapping, str, str, list[str]], list[Deployment]]

KUBERNETES_KINDS: dict[str, str] = {
    "LeaderWorkerSet": "kubernetes:lws",
    "InferenceService": "kserve:isvc",
    "ServingRuntime": "kserve:runtime",
    "ClusterServingRuntime": "kserve:runtime",
    "LLMInferenceService": "kserve_llm:extract",
    "Model": "kubeai:kubeai_model",
    "RayService": "ray:extract",
    "RayCluster": "ray:extract",
    "RayJob": "ray:extract",
    "NIMService": "kubernetes:nim_service",
    "Workspace": "kaito:workspace",
    "InferenceSet": "kaito:inference_set",
    "VLLMRuntime": "kubernetes:vllm_runtime",
    "DynamoGraphDeployment": "dynamo:extract",
}

# kinds another API group reuses: (group prefix, kind) -> reader, tried before KUBERNETES_KINDS
GROUP_KINDS: dict[tuple[str, str], str] = {
    ("ome.io/", "InferenceService"): "ome:isvc",
    ("ome.io/", "ClusterServingRuntime"): "ome:runtime",
    ("ome.io/", "ServingRuntime"): "ome:runtime",
    ("inference.llmaz.io/", "Playground"): "llmaz:playground",
    ("inference.llmaz.io/", "Service"): "llmaz:service",
    ("workload.serving.volcano.sh/", "ModelBooster"): "kthena:model_booster",
    ("ollama.ayaka.io/", "Model"): "ollama_operator:model",
    ("argoproj.io/", "Application"): "argocd:application",
    ("argoproj.io/", "ApplicationSet"): "argocd:application_set",
    ("helm.toolkit.fluxcd.io/", "HelmRelease"): "flux:helm_release",
    ("template.openshift.io/", "Template"): "openshift_template:extract",
    ("v1/", "Template"): "openshift_template:extract",
    (
        "kustomize.config.k8s.io/",
        "Kustomization",
    ): "kustomize:kustomization",  # the Template before its API group (OpenShift 3)
}

# (name, detector, reader), tried in order
DOCUMENT_KINDS: list[tuple[str, str, str]] = [
    ("skypilot", "skypilot:is_skypilot", "skypilot:extract"),
    ("dstack", "dstack:is_dstack", "dstack:extract"),
    ("truss", "truss:is_truss", "truss:extract"),
    ("vllm-config", "vllm_config:is_vllm_config", "vllm_config:extract"),
    ("docker-compose", "compose:is_compose", "compose:extract"),
    ("kustomize-helm-charts", "kustomize:is_kustomization", "kustomize:extract"),
    ("ray-serve-config", "ray_serve:is_serve_config", "ray_serve:extract"),
    ("llm-d-modelservice", "llmd_values:is_modelservice", "llmd_values:extract"),
    ("bjw-s-app-template", "app_template:is_app_template", "app_template:extract"),
    ("helm-values", "helm_values:always", "helm_values:extract"),
]


# file-level checks of documents that configure a stack but hold no workload (a chart's own values):
# (name, detector, checker), each run on every document without apiVersion/kind that it claims
DOCUMENT_CHECKS: list[tuple[str, str, str]] = [
    ("kubeai-chart", "kubeai_chart:is_kubeai_chart", "kubeai_chart:issues"),
]


@cache
def load(ref: str) -> Any:
    """The function a "module:function" reference names, its module imported on first use."""
    module, _, name = ref.partition(":")
    return getattr(import_module(f"kvlint.extract.kinds.{module}"), name)


def extract_object(
    root: Mapping, path: str, base_dir: str, lines: list[str], nearby: Nearby | None = None
) -> list[Deployment]:
    kind = str(root.value("kind"))
    group = str(root.value("apiVersion") or "").split("/")[0] + "/"
    ref = GROUP_KINDS.get((group, kind)) or KUBERNETES_KINDS.get(kind)
    extract = load("kubernetes:extract")
    return extract(root, path, base_dir, lines, load(ref) if ref else None, nearby)  # type: ignore[no-any-return]


# layouts whose reader also reads files the document names beside it (compose's .env and env_file,
# a kustomization's values files, the Chart.yaml beside a chart's values):
# given the Nearby of the file
READS_BESIDE = frozenset({"docker-compose", "kustomize-helm-charts", "helm-values"})


def extract_other(
    root: Mapping, path: str, base_dir: str, lines: list[str], nearby: Nearby | None = None
) -> list[Deployment]:
    for name, claims, reader in DOCUMENT_KINDS:
        if load(claims)(root):
            if name in READS_BESIDE:
                return load(reader)(root, path, base_dir, lines, nearby)  # type: ignore[no-any-return]
            return load(reader)(root, path, base_dir, lines)  # type: ignore[no-any-return]
    return []


def document_issues(root: Mapping, path: str) -> list[Issue]:
    return [
        i for _name, claims, check in DOCUMENT_CHECKS if load(claims)(root) for i in load(check)(root, path)
    ]


# node-pool definitions (kvlint/link/pools.py reads them from the repository): (API group, kind) -> reader
NODE_POOL_KINDS: dict[tuple[str, str], str] = {
    ("karpenter.sh", "NodePool"): "node_pool_kinds:karpenter",
    ("karpenter.sh", "Provisioner"): "node_pool_kinds:karpenter",
    ("eksctl.io", "ClusterConfig"): "node_pool_kinds:eksctl",
    ("container.cnrm.cloud.google.com", "ContainerNodePool"): "node_pool_kinds:container_node_pool",
    ("machine.openshift.io", "MachineSet"): "node_pool_kinds:machine_set",
    ("cluster.x-k8s.io", "MachineDeployment"): "node_pool_kinds:machine_set",
    ("cluster.x-k8s.io", "MachineSet"): "node_pool_kinds:machine_set",
    ("containerservice.azure.com", "ManagedClustersAgentPool"): "node_pool_kinds:aso_agent_pool",
    ("cloud.google.com", "ComputeClass"): "node_pool_kinds:compute_class",
}
# objects a pool refers to by name (Cluster API infrastructureRef)
NODE_POOL_TEMPLATES = ("AWSMachineTemplate", "GCPMachineTemplate", "AzureMachineTemplate")
# files that are not Kubernetes objects: (name, suffix, reader of the file's text)
NODE_POOL_FILES: list[tuple[str, str, str]] = [
    ("terraform", ".tf", "node_pools_tf:read"),
    ("arm-template", ".json", "node_pools_tf:read_arm"),
]


def node_pool_file_reader(ref: str) -> Callable[[str, str, str | None], list[node_pools.Pool]]:
    """The reader of a NODE_POOL_FILES entry's text: (text, path as shown, path on disk)."""
    return load(ref)  # type: ignore[no-any-return]


def node_pool_reader(root: Mapping) -> node_pool_kinds.PoolReader | None:
    group = str(root.value("apiVersion") or "").split("/")[0]
    ref = NODE_POOL_KINDS.get((group, str(root.value("kind") or "")))
    return load(ref) if ref else None
