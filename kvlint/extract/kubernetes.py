"""Kubernetes objects -> Deployments. Pod-template workloads of any kind (Deployment, StatefulSet,
DaemonSet, ReplicaSet, Job, CronJob, Pod, and CRDs that embed pod templates), with special
handling where one replica spans several pods (LeaderWorkerSet, Ray) or the model is named
outside the container (KServe, KubeAI, NIM). Documents that serve no model give nothing."""

from __future__ import annotations

import contextlib

from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract import container as ct
from kvlint.extract import pods
from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Scalar, Sequence

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


def context(root: Mapping, path: str, lines: list[str], base_dir: str) -> ct.ObjectContext:
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
    )


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    kind = root.value("kind")
    if not isinstance(kind, str) or kind in NOT_WORKLOADS or kind.endswith("List"):
        return []
    ctx = context(root, path, lines, base_dir)
    handler = HANDLERS.get(kind)
    found = handler(ctx) if handler else pod_workloads(ctx)
    for d in found:
        ct.finish(d)
    return found


def pod_workloads(ctx: ct.ObjectContext) -> list[Deployment]:
    """Every serving container in every pod template of the object; the pods of one group (an LWS
    leader and its workers, an AIBrix pod group) that run the same engine and model count once."""
    out: list[tuple[tuple, Deployment]] = []
    for spec in pods.find_pod_specs(ctx.root):
        role = _role(spec.path)
        size = _group_size(ctx.root, spec.path, ctx.file)
        for c in pods.containers(spec.node):
            d = ct.build(ctx, spec.node, c)
            if d is None:
                continue
            if size is not None and d.pods is None:
                d.pods = size
            key = (role, d.engine_name, d.model.value if d.model else None)
            if any(k == key for k, _ in out):
                continue
            out.append((key, d))
    found = [d for _, d in out]
    if len(found) > 1:
        for (role, _, _), d in out:
            label = _role_name(ctx.root, role)
            d.name = f"{d.name}/{label}" if label else d.name
        names = [d.name for d in found]
        for i, d in enumerate(found):
            if names.count(d.name) > 1:
                d.name = f"{d.name}#{i + 1}"
    return found


_GROUP_PARTS = {"leaderTemplate", "workerTemplate", "headGroupSpec", "template", "spec"}


def _role(path: tuple[str, ...]) -> tuple[str, ...]:
    """The pod path without the leader/worker/head segments: pods of one group share it."""
    out: list[str] = []
    skip_index = False
    for part in path:
        if skip_index and part.isdigit():
            skip_index = False
            continue
        skip_index = part == "workerGroupSpecs"
        if part in _GROUP_PARTS or part == "workerGroupSpecs":
            continue
        out.append(part)
    return tuple(out)


def _step(node, part: str):
    if isinstance(node, Mapping):
        return node.get(part)
    if isinstance(node, Sequence) and part.isdigit() and int(part) < len(node.items):
        return node.items[int(part)]
    return None


def _role_name(root: Mapping, role: tuple[str, ...]) -> str:
    """`prefill` for a pod under roles[i] whose entry is named (AIBrix, llm-d)."""
    node = root
    label = ""
    for part in role:
        node = _step(node, part)
        if node is None:
            break
        if part.isdigit() and isinstance(node, Mapping) and isinstance(node.value("name"), str):
            label = str(node.value("name"))
    return label


def _group_size(root: Mapping, path: tuple[str, ...], file: str):
    """Pods per replica from the nearest `podGroupSize` (AIBrix) or leaderWorkerTemplate.size (LWS)."""
    node = root
    found = None
    for part in path:
        if isinstance(node, Mapping):
            group = node.scalar("podGroupSize")
            if group is not None and isinstance(group.value, int):
                found = stated(group.value, group.where(file), "podGroupSize: pods per replica")
            lwt = node.map("leaderWorkerTemplate")
            size = lwt.scalar("size") if lwt is not None else None
            if size is not None and isinstance(size.value, int):
                found = stated(size.value, size.where(file), "LeaderWorkerSet size: pods per replica")
        node = _step(node, part)
        if node is None:
            break
    return found


# --- LeaderWorkerSet: one replica = `size` pods ------------------------------------------------


def lws(ctx: ct.ObjectContext) -> list[Deployment]:
    found = pod_workloads(ctx)
    for d in found:
        if d.pods is None:
            d.pods = inferred(1, "LeaderWorkerSet without size: 1 pod")
    return found


# --- KServe ------------------------------------------------------------------------------------


def kserve_isvc(ctx: ct.ObjectContext) -> list[Deployment]:
    predictor = ctx.root.at("spec", "predictor")
    if not isinstance(predictor, Mapping):
        return []
    found = pod_workloads(ctx)
    if found:
        return found
    model = predictor.map("model")
    if model is None:
        return []
    fmt = model.at("modelFormat", "name")
    runtime = model.scalar("runtime")
    text = " ".join(
        str(n.value) for n in (fmt, runtime) if isinstance(n, Scalar) and n.value is not None
    ).lower()
    d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    where = (runtime or fmt or model).where(ctx.file)
    if "nim" in text:
        d.engine = stated("nim", where, "KServe NIM runtime")
        ct.mark_unsupported(d, "nim", where)
    elif "vllm" in text or "huggingface" in text:
        d.engine = stated("vllm", where, "KServe Hugging Face / vLLM runtime")
        args = model.seq("args")
        if args is not None:
            ct.read_engine(d, ct.Launch("vllm", _tokens(args, ctx.file), None, "KServe model args"), {})
        uri = model.scalar("storageUri")
        if uri is not None and d.model is None and str(uri.value).startswith("hf://"):
            d.model = stated(str(uri.value)[5:], uri.where(ctx.file))
    else:
        return []
    ct.add_container_facts(d, ctx, predictor, model)
    return [d]


def _tokens(seq, path):
    from kvlint.extract.argv import Token, scalar_where

    return [
        Token(str(n.value), scalar_where(n, path))
        for n in seq
        if isinstance(n, Scalar) and n.value is not None
    ]


def kserve_runtime(ctx: ct.ObjectContext) -> list[Deployment]:
    found = pod_workloads(ctx)
    for d in found:
        if d.model is None:
            d.issues.append(
                Issue(
                    "KV004",
                    f"{d.label()}: a serving runtime template; the model comes from each InferenceService",
                    d.where,
                )
            )
            d.extra["unsupported"] = stated("runtime-template", d.where)
    return found


def llm_isvc(ctx: ct.ObjectContext) -> list[Deployment]:
    """KServe LLMInferenceService: vLLM (llm-d) with the model in spec.model and TP in spec.parallelism."""
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    roles = [("", spec)]
    if isinstance(spec.get("prefill"), Mapping):
        roles.append(("prefill", spec.map("prefill")))
    out: list[Deployment] = []
    for role, body in roles:
        d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name + (f"/{role}" if role else ""), ctx.base_dir)
        d.ignores = dict(ctx.ignores)
        name = spec.at("model", "name")
        uri = spec.at("model", "uri")
        d.engine = inferred("vllm", "KServe LLMInferenceService runs vLLM")
        if isinstance(name, Scalar) and name.value:
            d.model = stated(str(name.value), name.where(ctx.file))
        elif isinstance(uri, Scalar) and str(uri.value).startswith("hf://"):
            d.model = stated(str(uri.value)[5:], uri.where(ctx.file))
        tp = body.at("parallelism", "tensor")
        if isinstance(tp, Scalar) and isinstance(tp.value, int):
            d.tensor_parallel = stated(tp.value, tp.where(ctx.file))
        pp = body.at("parallelism", "pipeline")
        if isinstance(pp, Scalar) and isinstance(pp.value, int):
            d.pipeline_parallel = stated(pp.value, pp.where(ctx.file))
        template = body.map("template")
        if template is not None:
            for c in pods.containers(template):
                ct.add_container_facts(d, ctx, template, c)
                args = c.seq("args")
                if args is not None:
                    from kvlint.extract.engine_args import vllm

                    vllm.read(d, _tokens(args, ctx.file), {}, positional_model=False)
                break
        out.append(d)
    return out


# --- KubeAI Model ------------------------------------------------------------------------------


def kubeai_model(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    return [d for d in [kubeai_spec(ctx, spec)] if d is not None] if spec is not None else []


def kubeai_spec(ctx: ct.ObjectContext, spec: Mapping, name: str | None = None) -> Deployment | None:
    engine_node = spec.scalar("engine")
    engine = str(engine_node.value).lower() if engine_node is not None else ""
    d = Deployment(
        ctx.file,
        ctx.where if name is None else spec.where(ctx.file),
        ctx.kind,
        name or ctx.name,
        ctx.base_dir,
    )
    d.ignores = dict(ctx.ignores)
    url = spec.scalar("url")
    where = (engine_node or spec).where(ctx.file)
    if engine in ("vllm", ""):
        if engine == "" and url is None:
            return None
        d.engine = stated("vllm", where, "KubeAI engine VLLM")
        args = spec.seq("args")
        if args is not None:
            from kvlint.extract.engine_args import vllm

            env = {}
            envmap = spec.map("env")
            from kvlint.extract.argv import EnvVar

            for k, v in envmap.items() if envmap else ():
                if isinstance(v, Scalar):
                    env[k] = EnvVar(str(v.value), v.where(ctx.file))
            vllm.read(d, _tokens(args, ctx.file), env, positional_model=False)
    elif engine in ("ollama", "infinity", "fasterwhisper"):
        if engine != "ollama":
            return None  # embeddings / speech: not an LLM serving engine kvlint checks
        d.engine = stated("ollama", where)
        ct.mark_unsupported(d, "ollama", where)
    else:
        d.engine = stated(engine, where)
        ct.mark_unsupported(d, "other", where)
    if url is not None and url.value:
        text = str(url.value)
        for prefix in ("hf://", "huggingface://", "ollama://"):
            if text.startswith(prefix):
                text = text[len(prefix) :]
        if str(url.value).startswith(("ollama://", "s3://", "gs://", "oss://", "pvc://")):
            d.model = stated(text, url.where(ctx.file), "not a Hugging Face id")
        else:
            d.model = stated(text, url.where(ctx.file))
    profile = spec.scalar("resourceProfile")
    if profile is not None and profile.value:
        from kvlint.extract import gpu_selectors

        text = str(profile.value)
        if text.startswith(("cpu", "google-tpu")):
            d.accelerator = "cpu" if text.startswith("cpu") else "tpu"
            if d.accelerator == "cpu":
                d.issues.append(
                    Issue(
                        "KV004",
                        f"{d.label()}: runs on CPUs; kvlint models GPU memory",
                        profile.where(ctx.file),
                    )
                )
                d.extra["unsupported"] = stated("cpu", profile.where(ctx.file))
        else:
            gpu, count, note = gpu_selectors.kubeai_profile(text)
            d.gpu = inferred(gpu.id if gpu else text.partition(":")[0], note, profile.where(ctx.file))
            if count is not None:
                d.gpus_per_pod = inferred(count, note, profile.where(ctx.file))
    return d


# --- Ray -----------------------------------------------------------------------------------------


def ray(ctx: ct.ObjectContext) -> list[Deployment]:
    from kvlint.extract import ray as ray_mod

    return ray_mod.extract(ctx)


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
    if isinstance(repo, Scalar):
        d.image = stated(str(repo.value), where)
    gpus = spec.at("resources", "limits", "nvidia.com/gpu")
    if isinstance(gpus, Scalar):
        with contextlib.suppress(ValueError):
            d.gpus_per_pod = stated(int(str(gpus.value)), gpus.where(ctx.file))
    ct.mark_unsupported(d, "nim", where)
    return [d]


def kaito(ctx: ct.ObjectContext) -> list[Deployment]:
    """KAITO Workspace: a preset name, the VM size (resource.instanceType) and node count."""
    preset = ctx.root.at("inference", "preset", "name")
    if not isinstance(preset, Scalar):
        return []
    d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.model = stated(str(preset.value), preset.where(ctx.file), "KAITO preset name")
    d.engine = stated("kaito", preset.where(ctx.file))
    itype = ctx.root.at("resource", "instanceType")
    if isinstance(itype, Scalar) and itype.value:
        ct.apply_labels(d, [("node.kubernetes.io/instance-type", [str(itype.value)], itype.where(ctx.file))])
    count = ctx.root.at("resource", "count")
    if isinstance(count, Scalar) and isinstance(count.value, int):
        d.pods = stated(count.value, count.where(ctx.file), "KAITO resource.count: GPU nodes")
    ct.mark_unsupported(d, "kaito", preset.where(ctx.file))
    return [d]


def vllm_runtime(ctx: ct.ObjectContext) -> list[Deployment]:
    """production-stack operator VLLMRuntime: spec.model.modelURL, spec.vllmConfig, spec.deploymentConfig."""
    from kvlint.extract import helm_values

    spec = ctx.root.map("spec")
    if spec is None:
        return []
    return helm_values.production_stack_entry(ctx, spec, ctx.name)


HANDLERS = {
    "LeaderWorkerSet": lws,
    "InferenceService": kserve_isvc,
    "ServingRuntime": kserve_runtime,
    "ClusterServingRuntime": kserve_runtime,
    "LLMInferenceService": llm_isvc,
    "Model": kubeai_model,
    "RayService": ray,
    "RayCluster": ray,
    "RayJob": ray,
    "NIMService": nim_service,
    "Workspace": kaito,
    "VLLMRuntime": vllm_runtime,
}
