"""vLLM production-stack: a `servingEngineSpec.modelSpec[]` entry of its Helm values, and the
operator's VLLMRuntime CRD (the same fields under spec.model / spec.vllmConfig / spec.deploymentConfig)."""

from __future__ import annotations

import contextlib

from kvlint import engines
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, default, inferred, stated
from kvlint.extract.charts import chart_layouts
from kvlint.extract.charts import production_stack_keys as ps_keys
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import pods
from kvlint.extract.pod.argv import Token, option_tokens, scalar_where
from kvlint.findings import Issue, Severity
from kvlint.load.tree import Mapping, Scalar, Sequence

# production-stack vllmConfig keys -> vLLM options
PS_CONFIG = {
    "maxModelLen": "--max-model-len",
    "tensorParallelSize": "--tensor-parallel-size",
    "pipelineParallelSize": "--pipeline-parallel-size",
    "maxNumSeqs": "--max-num-seqs",
    "gpuMemoryUtilization": "--gpu-memory-utilization",
    "dtype": "--dtype",
    "enableChunkedPrefill": "--enable-chunked-prefill",
    "maxNumBatchedTokens": "--max-num-batched-tokens",
    "kvCacheDtype": "--kv-cache-dtype",
    "quantization": "--quantization",
    "blockSize": "--block-size",
}


# Keys of a servingEngineSpec.modelSpec[] entry the chart reads: values.schema.json `items.properties`
# plus every `$modelSpec.<key>` / `hasKey $modelSpec "<key>"` in helm/templates/*. The schema does not
# forbid other keys, so Helm renders the entry without them.
PS_SOURCE = (
    "vllm-project/production-stack@a6c01db0 helm/values.schema.json "
    "servingEngineSpec.modelSpec.items and helm/templates/*.yaml"
)
PS_MODELSPEC_KEYS = frozenset(
    [
        "annotations",
        "podAnnotations",
        "name",
        "repository",
        "tag",
        "imagePullSecret",
        "modelURL",
        "replicaCount",
        "requestCPU",
        "requestMemory",
        "limitCPU",
        "limitMemory",
        "requestGPU",
        "requestGPUType",
        "requestGPUMem",
        "requestGPUMemPercentage",
        "requestGPUCores",
        "limitGPUMem",
        "limitGPUMemPercentage",
        "limitGPUCores",
        "priorityClassName",
        "runtimeClassName",
        "pvcStorage",
        "pvcLabels",
        "pvcMatchLabels",
        "pvcAnnotations",
        "pvcAccessMode",
        "pvcExistingClaimName",
        "storageClass",
        "serviceAccountName",
        "initContainer",
        "vllmConfig",
        "lmcacheConfig",
        "hf_token",
        "env",
        "envFromSecret",
        "nodeName",
        "nodeSelectorTerms",
        "affinity",
        "tolerations",
        "tolerationsPolicy",
        "chatTemplate",
        "chatTemplateConfigMap",
        "keda",
        "extraVolumes",
        "extraVolumeMounts",
        "toolCallParser",
        "enableTool",
        "enableLoRA",
        "modelRevision",
        "resources",
        "shmSize",
        "raySpec",
        "enabled",
        "labels",
        "podLabels",
        "serviceAnnotations",
        "pdb",
    ]
)
# keys people write for what the chart reads elsewhere (paths relative to the modelSpec entry)
PS_MODELSPEC_PLACES = {
    "gpu": "requestGPU",
    "gpus": "requestGPU",
    "numGPUs": "requestGPU",
    "nvidia.com/gpu": "requestGPU",
    "cpu": "requestCPU",
    "memory": "requestMemory",
    "replicas": "replicaCount",
    "model": "modelURL",
    "modelName": "modelURL",
    "image": "repository",
    "imageTag": "tag",
    "nodeSelector": "nodeSelectorTerms",
    "args": "vllmConfig.extraArgs",
    "extraArgs": "vllmConfig.extraArgs",
    "hfToken": "hf_token",
    **{key: f"vllmConfig.{key}" for key in PS_CONFIG},
}


def production_stack_entry(ctx: ct.ObjectContext, spec: Mapping, label: str) -> list[Deployment]:
    path = ctx.file
    model_box = spec.map("model") if ctx.kind == "VLLMRuntime" else spec
    name_node = spec.scalar("name")
    name = f"{label} ({name_node.value})" if name_node is not None and ctx.kind != "VLLMRuntime" else label
    d = Deployment(path, (name_node or spec).where(path), ctx.kind, name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    url = model_box.scalar("modelURL") if model_box is not None else None
    repo = spec.scalar("repository")
    d.engine = stated("vllm", (repo or url or spec).where(path), "vLLM production-stack")
    if url is not None and url.value:
        d.model = stated(str(url.value), url.where(path))
    if repo is not None:
        _image(d, spec, repo, path)
    engines.get("vllm").read_options(
        d,
        _engine_tokens(
            spec, model_box if ctx.kind == "VLLMRuntime" else None, path, ctx.kind == "VLLMRuntime"
        ),
        {},
        positional_model=False,
    )
    if ctx.kind != "VLLMRuntime":
        d.issues.extend(
            chart_layouts.keys_not_read(
                spec,
                path,
                "vLLM production-stack chart",
                PS_MODELSPEC_KEYS,
                PS_MODELSPEC_PLACES,
                PS_SOURCE,
                f"{label}.",
            )
        )
        d.issues.extend(ps_keys.nested_issues(spec, path, label))
    else:
        d.issues.extend(ps_keys.runtime_issues(spec, path))
    _gpu_request(d, spec, path, ctx.kind == "VLLMRuntime")
    ray = spec.map("raySpec")
    if ray is not None and ray.value("enabled") is True:
        _ray_group(d, spec, ray, path)
    # VLLMRuntime: spec.deploymentConfig.nodeSelectorTerms (operator vllmruntime_types.go DeploymentConfig)
    terms = (
        spec.at("deploymentConfig", "nodeSelectorTerms")
        if ctx.kind == "VLLMRuntime"
        else spec.get("nodeSelectorTerms")
    )
    if isinstance(terms, Sequence):
        _selector_terms(d, terms, path)
    if ctx.kind != "VLLMRuntime":
        d.placement = _placement(ctx.root, spec, terms, path)
    _memory(d, spec, path)
    return [d]


def _gpu_request(d: Deployment, spec: Mapping, path: str, runtime: bool) -> None:
    """GPUs per pod: requestGPU (a VLLMRuntime's deploymentConfig.resources.gpu); left out of the chart's
    values, the pod asks for none (_no_gpu_request)."""
    gpu = spec.at("deploymentConfig", "resources", "gpu") if runtime else spec.scalar("requestGPU")
    if isinstance(gpu, Scalar) and gpu.value is not None:
        with contextlib.suppress(ValueError):
            # the resource the chart requests: requestGPUType, else nvidia.com/gpu
            # (helm/templates/_helpers.tpl:173 @a6c01db0): it tolerates that resource's taint (link/pools.py)
            kind = spec.scalar("requestGPUType")
            resource = str(kind.value) if kind is not None and kind.value else "nvidia.com/gpu"
            d.gpus_per_pod = stated(int(str(gpu.value)), gpu.where(path), resource)
            d.gpu_resource = resource
    elif not runtime:
        _no_gpu_request(d, spec, path)


def _memory(d: Deployment, spec: Mapping, path: str) -> None:
    """shmSize (the chart mounts a memory-backed /dev/shm of that size) and requestMemory, as quantities."""
    shm = spec.scalar("shmSize")
    d.has_shm = True if shm is not None else None
    if shm is not None:
        d.shm_size = stated(str(shm.value), shm.where(path))
        d.memory_quantities.append(("shmSize", str(shm.value), shm.where(path)))
    mem = spec.scalar("requestMemory")
    if mem is not None and mem.value is not None:
        d.memory_quantities.append(("requestMemory", str(mem.value), mem.where(path)))


def _no_gpu_request(d: Deployment, spec: Mapping, path: str) -> None:
    """requestGPU left out (or commented out): the chart's templates add `nvidia.com/gpu` (or requestGPUType)
    to requests/limits only `if gt (int $modelSpec.requestGPU) 0`, so the pod asks Kubernetes for 0 GPUs."""
    where = (spec.scalar("name") or spec).where(path)
    d.gpus_per_pod = default(
        0,
        f"requestGPU left out: the chart requests no GPU for the pod (`int` of a missing value is 0; {PS_SOURCE})",
    )
    d.issues.append(
        Issue(
            UNPARSED_SETTING,
            f"{d.label()}: `requestGPU` is left out, so the production-stack chart asks Kubernetes for 0 GPUs "
            "(its templates add the GPU request only when requestGPU > 0) and the pod is scheduled without a GPU; "
            f"its values.schema.json also lists requestGPU as required ({PS_SOURCE})",
            where,
            fix="set requestGPU to the GPUs each replica needs (tensor x pipeline parallel size)",
            severity=Severity.WARNING,
        )
    )


def _image(d: Deployment, spec: Mapping, repo: Scalar, path: str) -> None:
    tag = spec.scalar("tag")
    image = f"{repo.value}:{tag.value if tag is not None else 'latest'}"
    d.image = stated(image, repo.where(path))
    version = ct.image_version(image, "vllm")
    if version:
        d.engine_version = inferred(version, f"from the image tag {image}", (tag or repo).where(path))


def _engine_tokens(spec: Mapping, model_box: Mapping | None, path: str, runtime: bool) -> list[Token]:
    """vllmConfig keys (and, for VLLMRuntime, spec.model's) as vLLM options, then extraArgs: only the keys
    the chart's templates (or the operator) render as flags (production_stack_keys)."""
    cfg = spec.map("vllmConfig")
    entries: list[tuple[str, Scalar]] = []
    for name, box in (("vllmConfig", cfg), ("model", model_box)):
        read = ps_keys.rendered(spec, name, runtime)
        for key, option in PS_CONFIG.items():
            node = box.scalar(key) if box is not None and key in read else None
            if node is not None:
                entries.append((option, node))
    tokens = option_tokens(entries, path)
    extra = cfg.seq("extraArgs") if cfg is not None else None
    for node in extra or ():  # type: ignore[assignment]
        if isinstance(node, Scalar) and node.value is not None:
            tokens.extend(Token(w, scalar_where(node, path)) for w in str(node.value).split())
    return tokens


def _ray_group(d: Deployment, spec: Mapping, ray: Mapping, path: str) -> None:
    """raySpec: a head pod plus replicaCount worker pods serve one model."""
    workers = spec.scalar("replicaCount")
    head = ray.at("headNode", "requestGPU")
    n_workers = int(workers.value) if workers is not None and isinstance(workers.value, int) else 1
    d.pods = inferred(
        1 + n_workers,
        "raySpec: a head pod plus replicaCount worker pods serve one model",
        (workers or ray).where(path),
    )
    head_gpus = int(head.value) if isinstance(head, Scalar) and isinstance(head.value, int) else 0
    per = int(d.gpus_per_pod.value) if d.gpus_per_pod else 0
    d.gpus = inferred(
        head_gpus + n_workers * per,
        f"{head_gpus} on the Ray head + {n_workers} x {per} on workers",
        ray.where(path),
    )


def _selector_terms(d: Deployment, terms: Sequence, path: str) -> None:
    """nodeSelectorTerms read with the pod-spec label reader (wrapped as a required node affinity)."""
    fake = Mapping((terms.line, terms.col, terms.end_line, terms.end_col))
    aff = {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    }
    fake.values = _wrap(aff, terms)
    ct.apply_labels(d, pods.node_labels(fake, path))


def _placement(root: Mapping, spec: Mapping, terms, path: str):
    """The pod's node placement as the chart writes it (helm/templates/deployment-vllm-multi.yaml:504-540
    @a6c01db0): servingEngineSpec.tolerations, then the entry's own appended (or in their place with
    tolerationsPolicy: override); the entry's affinity, else its nodeSelectorTerms as a required node
    affinity. servingEngineSpec.nodeSelector is not a chart key: the pod gets none from it."""
    from kvlint.extract.kinds import node_pools

    tolerations = Sequence((spec.line, spec.col, spec.end_line, spec.end_col))
    glob, own = root.at("servingEngineSpec", "tolerations"), spec.get("tolerations")
    if not (isinstance(own, Sequence) and own.items and spec.value("tolerationsPolicy") == "override"):
        tolerations.items.extend(glob.items if isinstance(glob, Sequence) else ())
    tolerations.items.extend(own.items if isinstance(own, Sequence) else ())
    fake = Mapping((spec.line, spec.col, spec.end_line, spec.end_col))
    fake.values = {"tolerations": tolerations}
    affinity = spec.get("affinity")
    if isinstance(affinity, Mapping) and affinity.values:
        fake.values["affinity"] = affinity
    elif isinstance(terms, Sequence):
        wrapped = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
        fake.values["affinity"] = _wrap({"affinity": wrapped}, terms)["affinity"]
    return inferred(node_pools.placement(fake, path), "production-stack tolerations and node affinity")


def _wrap(data, leaf):
    """Build Mapping nodes around an existing node (to reuse the pod-spec label reader)."""
    out = {}
    for key, value in data.items():
        if isinstance(value, dict):
            m = Mapping((leaf.line, leaf.col, leaf.end_line, leaf.end_col))
            m.values = _wrap(value, leaf)
            out[key] = m
        else:
            out[key] = value
    return out
