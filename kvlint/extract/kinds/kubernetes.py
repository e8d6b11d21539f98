"""Kubernetes objects -> Deployments. Pod-template workloads of any kind (Deployment, StatefulSet,
DaemonSet, ReplicaSet, Job, CronJob, Pod, and CRDs that embed pod templates), with special
handling where one replica spans several pods (LeaderWorkerSet, Ray) or the model is named
outside the container (KServe, KubeAI, NIM). Documents that serve no model give nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.kinds import node_pools
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import pods
from kvlint.extract.pod.argv import read_env
from kvlint.extract.pod.workloads import pod_workloads
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Scalar

NOT_WORKLOADS = {
    "Service",
    "ConfigMap",
    "Secret",
    "HorizontalPodAutoscaler",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "Ingress",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "Namespace",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "StorageClass",
    "Gateway",
    "HTTPRoute",
    "InferencePool",
    "InferenceModel",
    "InferenceObjective",
    "ServiceMonitor",
    "PodMonitor",
    "PriorityClass",
    "ResourceQuota",
    "LimitRange",
    "CustomResourceDefinition",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "ResourceFlavor",
    "ClusterQueue",
    "LocalQueue",
    "NIMCache",
    "BackendTrafficPolicy",
    "EnvoyExtensionPolicy",
}


def context(
    root: Mapping, path: str, lines: list[str], base_dir: str, nearby: Nearby | None = None
) -> ct.ObjectContext:
    name = root.at("metadata", "name")
    return ct.ObjectContext(
        file=path,
        lines=lines,
        base_dir=base_dir,
        root=root,
        kind=str(root.value("kind")),
        name=name.text
        if isinstance(name, Scalar) and name.value is not None
        else "",  # as written: `name: y` is no bool
        ignores=ct.read_ignores(root, path),
        nearby=nearby,
    )


def extract(
    root: Mapping,
    path: str,
    base_dir: str,
    lines: list[str],
    handler: Callable[[ct.ObjectContext], list[Deployment]] | None = None,
    nearby: Nearby | None = None,
) -> list[Deployment]:
    """One object, read by its kind's reader (extract/registry.py) or as pod templates."""
    kind = root.value("kind")
    if not isinstance(kind, str) or (kind in NOT_WORKLOADS and handler is None) or kind.endswith("List"):
        return []
    ctx = context(root, path, lines, base_dir, nearby)
    found = handler(ctx) if handler else pod_workloads(ctx)
    for d in found:
        ct.finish(d)
    return found


# --- LeaderWorkerSet: one replica = `size` pods ------------------------------------------------


def lws(ctx: ct.ObjectContext) -> list[Deployment]:
    found = pod_workloads(ctx)
    for d in found:
        if d.pods is None:
            d.pods = inferred(1, "LeaderWorkerSet without size: 1 pod")
    return found


# --- NIM -----------------------------------------------------------------------------------------


def nim_service(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    repo = spec.at("image", "repository")
    where = repo.where(ctx.file) if repo is not None else ctx.where
    d.engine = stated("nim", where, "NVIDIA NIM")
    if isinstance(repo, Scalar):  # the container's image is `repository:tag` (nimservice_types.go GetImage)
        tag = spec.at("image", "tag")
        shown = (
            f"{repo.value}:{tag.text}"
            if isinstance(tag, Scalar) and tag.value is not None
            else str(repo.value)
        )
        d.image = stated(shown, where)
    gpus = spec.at("resources", "limits", "nvidia.com/gpu")
    if isinstance(gpus, Scalar):
        with contextlib.suppress(ValueError):
            d.gpus_per_pod = stated(int(str(gpus.value)), gpus.where(ctx.file), "nvidia.com/gpu")
            d.gpu_resource = "nvidia.com/gpu"
    # spec.env becomes the container's (NVIDIA/k8s-nim-operator@0464933f nimservice_types.go GetEnv)
    ct.read_engine(d, ct.Launch("nim", [], None, "NIMService"), read_env(spec, ctx.file))
    # spec.nodeSelector, .affinity and .tolerations become the pod's (NVIDIA/k8s-nim-operator@0464933f
    # nimservice_types.go GetDeploymentParams): they decide the node pools it lands on (link/pools.py)
    d.placement = inferred(node_pools.placement(spec, ctx.file), "NIMService node selectors and tolerations")
    ct.apply_labels(d, pods.node_labels(spec, ctx.file))
    return [d]


def vllm_runtime(ctx: ct.ObjectContext) -> list[Deployment]:
    """production-stack operator VLLMRuntime: spec.model.modelURL, spec.vllmConfig, spec.deploymentConfig."""
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    from kvlint.extract.kinds.production_stack import production_stack_entry  # its chart layouts: only here

    return production_stack_entry(ctx, spec, ctx.name)
