"""Helm values files that configure model servers (documents without apiVersion/kind).

- vLLM production-stack: `servingEngineSpec.modelSpec[]` (modelURL, requestGPU, vllmConfig, raySpec),
  and the operator's VLLMRuntime CRD (same fields under spec.model / spec.vllmConfig / spec.deploymentConfig).
- KubeAI models chart: `catalog.<name>: {url, engine, args, resourceProfile}`.
- Charts in the vLLM Helm chart's shape and similar (`image.repository` naming the engine, `model.id`,
  `image.command`, `resources`, `nodeSelector`, `tensorParallelSize`, `maxModelLen`, `gpuModels`).
"""

from __future__ import annotations

import contextlib

from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract import container as ct
from kvlint.extract import pods
from kvlint.extract.argv import Token, scalar_where
from kvlint.findings import Issue
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


def _ctx(root: Mapping, path: str, lines: list[str], base_dir: str, kind: str = "values") -> ct.ObjectContext:
    return ct.ObjectContext(path, lines, base_dir, root, kind, "", {})


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    out: list[Deployment] = []
    ctx = _ctx(root, path, lines, base_dir)
    spec_list = root.at("servingEngineSpec", "modelSpec")
    if isinstance(spec_list, Sequence):
        for i, entry in enumerate(spec_list.items):
            if isinstance(entry, Mapping):
                out.extend(production_stack_entry(ctx, entry, f"servingEngineSpec.modelSpec[{i}]"))
    catalog = root.map("catalog")
    if catalog is not None and all(isinstance(v, Mapping) for _, v in catalog.items()):
        from kvlint.extract.kubernetes import kubeai_spec

        for name, entry in catalog.items():
            if isinstance(entry, Mapping) and ("url" in entry or "engine" in entry):
                d = kubeai_spec(ctx, entry, f"catalog.{name}")
                if d is not None:
                    out.append(d)
    if not out and _is_nim_chart(root):
        d = Deployment(path, root.where(path), "values", "(root)", base_dir)
        model = root.at("model", "name")
        where = (model or root).where(path)
        d.engine = stated("nim", where, "nim-llm Helm values")
        ct.mark_unsupported(d, "nim", where)
        out.append(d)
    if not out:
        d = chart_values(ctx, root)
        if d is not None:
            out.append(d)
    for d in out:
        ct.finish(d)
    return out


def _is_nim_chart(root: Mapping) -> bool:
    model = root.map("model")
    return model is not None and any(k in model for k in ("ngcAPISecret", "ngcAPIKey", "nimCache"))


def _vllm_tokens(entries: list[tuple[str, Scalar]], path: str) -> list[Token]:
    tokens: list[Token] = []
    for option, node in entries:
        value = node.value
        if isinstance(value, bool):
            tokens.append(Token(option if value else "--no-" + option[2:], scalar_where(node, path)))
        elif value is not None:
            tokens.append(Token(option, scalar_where(node, path)))
            tokens.append(Token(str(value), scalar_where(node, path)))
    return tokens


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
        tag = spec.scalar("tag")
        image = f"{repo.value}:{tag.value if tag is not None else 'latest'}"
        d.image = stated(image, repo.where(path))
        version = ct.image_version(image, "vllm")
        if version:
            d.engine_version = inferred(version, f"from the image tag {image}", (tag or repo).where(path))
    cfg = spec.map("vllmConfig")
    entries: list[tuple[str, Scalar]] = []
    for box in (cfg, model_box if ctx.kind == "VLLMRuntime" else None):
        for key, option in PS_CONFIG.items():
            node = box.scalar(key) if box is not None else None
            if node is not None:
                entries.append((option, node))
    tokens = _vllm_tokens(entries, path)
    extra = cfg.seq("extraArgs") if cfg is not None else None
    for node in extra or ():
        if isinstance(node, Scalar) and node.value is not None:
            tokens.extend(Token(w, scalar_where(node, path)) for w in str(node.value).split())
    from kvlint.extract.engine_args import vllm

    vllm.read(d, tokens, {}, positional_model=False)
    gpu = spec.scalar("requestGPU")
    if ctx.kind == "VLLMRuntime":
        gpu = spec.at("deploymentConfig", "resources", "gpu")
    if isinstance(gpu, Scalar) and gpu.value is not None:
        with contextlib.suppress(ValueError):
            d.gpus_per_pod = stated(int(str(gpu.value)), gpu.where(path), "requestGPU")
    ray = spec.map("raySpec")
    if ray is not None and ray.value("enabled") is True:
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
    terms = spec.get("nodeSelectorTerms")
    if isinstance(terms, Sequence):
        fake = Mapping((terms.line, terms.col, terms.end_line, terms.end_col))
        aff = {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
                }
            }
        }
        fake.values = _wrap(aff, terms)
        ct.apply_labels(d, pods.node_labels(fake, path))
    shm = spec.scalar("shmSize")
    d.has_shm = True if shm is not None else None
    if shm is not None:
        d.shm_size = stated(str(shm.value), shm.where(path))
        d.memory_quantities.append(("shmSize", str(shm.value), shm.where(path)))
    mem = spec.scalar("requestMemory")
    if mem is not None and mem.value is not None:
        d.memory_quantities.append(("requestMemory", str(mem.value), mem.where(path)))
    return [d]


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


def chart_values(ctx: ct.ObjectContext, root: Mapping) -> Deployment | None:
    """Values in the shape of the vLLM Helm chart (image + command/model + resources + nodeSelector)."""
    path = ctx.file
    image = root.map("image")
    repo = image.scalar("repository") if image is not None else None
    if repo is None or repo.value is None:
        inference = root.at("inference", "modelServer", "image", "repository")
        if isinstance(inference, Scalar):
            repo = inference
        else:
            return None
    text = str(repo.value)
    tag = image.scalar("tag") if image is not None else None
    full = f"{text}:{tag.value}" if tag is not None else text
    cmd = image.seq("command") if image is not None else None
    fake = Mapping((root.line, root.col, root.end_line, root.end_col))
    if cmd is not None:
        fake.values["command"] = cmd
    fake.values["image"] = repo
    for key in ("resources",):
        if key in root:
            fake.values[key] = root.values[key]
    from kvlint.extract.argv import container_commands, read_env
    from kvlint.extract.engine_args import find_launch

    env = read_env(fake, path)
    launch = find_launch(container_commands(fake, path, ctx.lines, env), full)
    model_node = (
        root.at("model", "id") or root.at("model", "name") or root.scalar("model") or root.scalar("modelId")
    )
    if launch is None:
        if not isinstance(model_node, Scalar):
            return None
        return None
    d = Deployment(path, root.where(path), "values", "(root)", ctx.base_dir)
    d.engine = stated(launch.engine, repo.where(path), launch.how)
    d.image = stated(full, repo.where(path))
    version = ct.image_version(full, launch.engine)
    if version:
        d.engine_version = inferred(version, f"from the image tag {full}", (tag or repo).where(path))
    if launch.engine == "vllm":
        from kvlint.extract.engine_args import vllm

        entries = [(opt, root.scalar(key)) for key, opt in PS_CONFIG.items() if root.scalar(key) is not None]
        vllm.read(d, list(launch.tokens) + _vllm_tokens(entries, path), env)
    elif launch.engine in ("sglang", "tgi"):
        ct.read_engine(d, launch, env)
    else:
        ct.mark_unsupported(d, launch.engine, repo.where(path))
    if (
        d.model is None
        and isinstance(model_node, Scalar)
        and model_node.value
        and "${" not in str(model_node.value)
    ):
        d.model = stated(str(model_node.value), model_node.where(path))
    ct.add_container_facts(d, ctx, root, fake)
    gpu_models = root.seq("gpuModels")
    if d.gpu is None and gpu_models is not None and gpu_models.items:
        first = gpu_models.items[0]
        if isinstance(first, Scalar) and first.value and "TYPE_GPU" not in str(first.value):
            d.gpu = stated(str(first.value), first.where(path), "gpuModels")
    if d.model is None:
        d.issues.append(Issue("KV003", "model is not stated in these values", d.where))
    return d
