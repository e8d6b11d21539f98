"""Every input kind kvlint reads, in one place.

Kubernetes objects are dispatched on `kind` (a kind not listed is read as pod templates); documents
without apiVersion/kind are tried against each detector in order, the first that claims the document
extracts it, Helm values last. kvlint's own ServingSpec is recognised before both (extract/__init__).
"""

from __future__ import annotations

from collections.abc import Callable

from kvlint.deployment import Deployment
from kvlint.extract.kinds import (
    compose,
    dynamo,
    helm_values,
    kaito,
    kserve,
    kserve_llm,
    kthena,
    kubeai,
    kubeai_chart,
    kubernetes,
    llmaz,
    llmd_values,
    node_pool_kinds,
    node_pools,
    node_pools_tf,
    ome,
    ray,
    ray_serve,
    skypilot,
    vllm_config,
)
from kvlint.extract.pod import container
from kvlint.findings import Issue
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping

ObjectReader = Callable[[container.ObjectContext], list[Deployment]]
DocumentReader = Callable[[Mapping, str, str, list[str]], list[Deployment]]

KUBERNETES_KINDS: dict[str, ObjectReader] = {
    "LeaderWorkerSet": kubernetes.lws,
    "InferenceService": kserve.isvc,
    "ServingRuntime": kserve.runtime,
    "ClusterServingRuntime": kserve.runtime,
    "LLMInferenceService": kserve_llm.extract,
    "Model": kubeai.kubeai_model,
    "RayService": ray.extract,
    "RayCluster": ray.extract,
    "RayJob": ray.extract,
    "NIMService": kubernetes.nim_service,
    "Workspace": kaito.workspace,
    "InferenceSet": kaito.inference_set,
    "VLLMRuntime": kubernetes.vllm_runtime,
    "DynamoGraphDeployment": dynamo.extract,
}

# kinds another API group reuses: (group prefix, kind) -> reader, tried before KUBERNETES_KINDS
GROUP_KINDS: dict[tuple[str, str], ObjectReader] = {
    (ome.GROUP, "InferenceService"): ome.isvc,
    (ome.GROUP, "ClusterServingRuntime"): ome.runtime,
    (ome.GROUP, "ServingRuntime"): ome.runtime,
    ("inference.llmaz.io/", "Playground"): llmaz.playground,
    ("inference.llmaz.io/", "Service"): llmaz.service,
    ("workload.serving.volcano.sh/", "ModelBooster"): kthena.model_booster,
}

# (name, detector, reader), tried in order
DOCUMENT_KINDS: list[tuple[str, Callable[[Mapping], bool], DocumentReader]] = [
    ("skypilot", skypilot.is_skypilot, skypilot.extract),
    ("vllm-config", vllm_config.is_vllm_config, vllm_config.extract),
    ("docker-compose", compose.is_compose, compose.extract),
    ("ray-serve-config", ray_serve.is_serve_config, ray_serve.extract),
    ("llm-d-modelservice", llmd_values.is_modelservice, llmd_values.extract),
    ("helm-values", helm_values.always, helm_values.extract),
]


# file-level checks of documents that configure a stack but hold no workload (a chart's own values):
# (name, detector, checker), each run on every document without apiVersion/kind that it claims
DOCUMENT_CHECKS: list[tuple[str, Callable[[Mapping], bool], Callable[[Mapping, str], list[Issue]]]] = [
    ("kubeai-chart", kubeai_chart.is_kubeai_chart, kubeai_chart.issues),
]


def extract_object(
    root: Mapping, path: str, base_dir: str, lines: list[str], nearby: Nearby | None = None
) -> list[Deployment]:
    kind = str(root.value("kind"))
    group = str(root.value("apiVersion") or "").split("/")[0] + "/"
    reader = GROUP_KINDS.get((group, kind)) or KUBERNETES_KINDS.get(kind)
    return kubernetes.extract(root, path, base_dir, lines, reader, nearby)


def extract_other(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    for _name, claims, reader in DOCUMENT_KINDS:
        if claims(root):
            return reader(root, path, base_dir, lines)
    return []


def document_issues(root: Mapping, path: str) -> list[Issue]:
    return [i for _name, claims, check in DOCUMENT_CHECKS if claims(root) for i in check(root, path)]


# node-pool definitions (kvlint/link/pools.py reads them from the repository): (API group, kind) -> reader
NODE_POOL_KINDS: dict[tuple[str, str], node_pool_kinds.PoolReader] = {
    ("karpenter.sh", "NodePool"): node_pool_kinds.karpenter,
    ("karpenter.sh", "Provisioner"): node_pool_kinds.karpenter,
    ("eksctl.io", "ClusterConfig"): node_pool_kinds.eksctl,
    ("container.cnrm.cloud.google.com", "ContainerNodePool"): node_pool_kinds.container_node_pool,
    ("machine.openshift.io", "MachineSet"): node_pool_kinds.machine_set,
    ("cluster.x-k8s.io", "MachineDeployment"): node_pool_kinds.machine_set,
    ("cluster.x-k8s.io", "MachineSet"): node_pool_kinds.machine_set,
    ("containerservice.azure.com", "ManagedClustersAgentPool"): node_pool_kinds.aso_agent_pool,
}
# objects a pool refers to by name (Cluster API infrastructureRef)
NODE_POOL_TEMPLATES = ("AWSMachineTemplate", "GCPMachineTemplate", "AzureMachineTemplate")
# files that are not Kubernetes objects: (name, suffix, reader of the file's text)
NODE_POOL_FILES: list[tuple[str, str, Callable[[str, str], list[node_pools.Pool]]]] = [
    ("terraform", ".tf", node_pools_tf.read),
    ("arm-template", ".json", node_pools_tf.read_arm),
]


def node_pool_reader(root: Mapping) -> node_pool_kinds.PoolReader | None:
    group = str(root.value("apiVersion") or "").split("/")[0]
    return NODE_POOL_KINDS.get((group, str(root.value("kind") or "")))
