"""KubeRay RayService / RayCluster / RayJob serving an LLM.

The model is named inside `serveConfigV2` (a YAML string): Ray Serve LLM's `llm_configs`
(`model_loading_config.model_source`, `accelerator_type`, `engine_kwargs` = vLLM's engine
arguments), or a custom app configured through `runtime_env.env_vars` (MODEL_ID,
TENSOR_PARALLELISM, MAX_MODEL_LEN …, read by the app's own code, so inferred). Positions inside the
string are mapped back to the file. GPUs come from the worker groups' pod templates.
"""

from __future__ import annotations

import re

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE, UNKNOWN_GPU
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.pod import adapters, pods
from kvlint.extract.pod import container as ct
from kvlint.extract.pod.argv import Token, scalar_where
from kvlint.extract.pod.workloads import pod_workloads
from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Scalar, Sequence

# env names custom Ray apps commonly read (the app code decides; kvlint infers)
APP_ENV = {
    "MODEL_ID": "model",
    "MODEL_NAME": "model",
    "MODEL": "model",
    "TENSOR_PARALLELISM": "--tensor-parallel-size",
    "TENSOR_PARALLEL_SIZE": "--tensor-parallel-size",
    "TP_SIZE": "--tensor-parallel-size",
    "PIPELINE_PARALLEL_SIZE": "--pipeline-parallel-size",
    "MAX_MODEL_LEN": "--max-model-len",
    "GPU_MEMORY_UTILIZATION": "--gpu-memory-utilization",
    "MAX_NUM_SEQ": "--max-num-seqs",
    "MAX_NUM_SEQS": "--max-num-seqs",
    "MAX_NUM_BATCHED_TOKENS": "--max-num-batched-tokens",
}


def serve_config(node: Scalar, path: str, lines: list[str]) -> tuple[Mapping | None, list[Issue]]:
    """Parse serveConfigV2 and move its positions to where the text sits in the file."""
    from kvlint.extract.pod import embedded

    return embedded.parse(node, path, lines, "serveConfigV2")


def extract(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    cluster = spec.map("rayClusterConfig") or (
        spec if ctx.kind == "RayCluster" else spec.map("rayClusterSpec")
    )
    gpu_pods = _gpu_groups(ctx, cluster)
    out: list[Deployment] = []
    scfg = spec.scalar("serveConfigV2")
    if scfg is not None and isinstance(scfg.value, str):
        root, issues = serve_config(scfg, ctx.file, ctx.lines)
        if root is None:
            d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
            d.issues.extend(issues)
            return [d] if issues else []
        for app in root.seq("applications") or ():
            if isinstance(app, Mapping):
                out.extend(_application(ctx, app, gpu_pods))
        if out:  # a worker group's node label no node carries: its pods stay Pending (said once)
            out[0].issues.extend(i for i in gpu_pods[0].issues if i.code == UNKNOWN_GPU)
    if not out:
        out = pod_workloads(ctx)
    return out


def _gpu_groups(ctx: ct.ObjectContext, cluster: Mapping | None) -> tuple[Deployment, int]:
    """A scratch Deployment holding the GPU facts of the worker groups, and the GPU pods counted."""
    scratch = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    count = 0
    if cluster is None:
        return scratch, 0
    gpu_placement = None
    for spec in pods.find_pod_specs(cluster):
        for c in pods.containers(spec.node):
            before = scratch.gpus_per_pod
            ct.add_container_facts(scratch, ctx, spec.node, c)
            if scratch.gpus_per_pod is not None and scratch.gpus_per_pod is not before:
                count += 1
                gpu_placement = scratch.placement
    if gpu_placement is not None:  # where the GPU workers land decides the node pools, not the head
        scratch.placement = gpu_placement
    return scratch, count


def _application(ctx: ct.ObjectContext, app: Mapping, gpu_pods: tuple[Deployment, int]) -> list[Deployment]:
    path = ctx.file
    out: list[Deployment] = []
    configs = llm_configs(app)
    if configs:
        return [llm_config_deployment(ctx, app, cfg, gpu_pods, role) for role, cfg in configs]
    env = app.at("runtime_env", "env_vars")
    args = app.map("args")
    evidence = _vllm_evidence(ctx, app)
    groups: dict[str, dict[str, Scalar]] = {}  # "" for MODEL_ID, "1" for MODEL_1_ID (multiplexing apps)
    for box in (env, args):
        if not isinstance(box, Mapping):
            continue
        for key, node in box.items():
            if not isinstance(node, Scalar) or node.value is None:
                continue
            m = _NUMBERED.match(key.upper())
            group, name = (m.group(1), m.group(2)) if m else ("", key.upper())
            name = {"ID": "MODEL_ID"}.get(name, name)
            if name in APP_ENV:
                groups.setdefault(group, {}).setdefault(name, node)
    if not groups and (evidence is not None or gpu_pods[1] or _names_llm(app)):
        return [_model_in_code(ctx, app, gpu_pods)]
    for group, values in sorted(groups.items()):
        model_node = next((values[k] for k in ("MODEL_ID", "MODEL_NAME", "MODEL") if k in values), None)
        if model_node is None:
            continue
        label = app.value("name") or "app"
        d = Deployment(
            path,
            model_node.where(path),
            ctx.kind,
            f"{ctx.name}/{label}" + (f"/{group}" if group else ""),
            ctx.base_dir,
        )
        d.ignores = dict(ctx.ignores)
        d.model = inferred(
            str(model_node.value), "from the Ray Serve app's runtime_env / args", model_node.where(path)
        )
        if evidence is None:
            d.engine = inferred(
                "other", "a custom Ray Serve app (no vLLM in its image or pip requirements)", app.where(path)
            )
            ct.mark_unsupported(d, "other", app.where(path))
            _copy_gpus(d, gpu_pods)
            out.append(d)
            continue
        version, how = evidence
        d.engine = inferred(
            "vllm",
            f"Ray Serve app running vLLM ({how}), configured through env vars its code reads",
            app.where(path),
        )
        if version:
            d.engine_version = inferred(version, how, app.where(path))
        tokens: list[Token] = []
        for name, node in values.items():
            option = APP_ENV[name]
            if option != "model":
                tokens += [
                    Token(option, scalar_where(node, path)),
                    Token(str(node.value), scalar_where(node, path)),
                ]

        engines.get("vllm").read_options(d, tokens, {}, positional_model=False, argv=False)
        _copy_gpus(d, gpu_pods)
        out.append(d)
    return out


def llm_configs(app: Mapping) -> list[tuple[str, Mapping]]:
    """Ray Serve LLM configs in an application's args: `llm_configs: [...]` (build_openai_app),
    `llm_config: {...}` (build_llm_deployment, build_dp_openai_app), `prefill_config` /
    `decode_config` (prefill/decode disaggregation), as ("", cfg) / ("prefill", cfg) pairs."""
    args = app.map("args")
    if args is None:
        return []
    out: list[tuple[str, Mapping]] = []
    seq = args.seq("llm_configs")
    out += [("", c) for c in seq or () if isinstance(c, Mapping)]
    for key, role in (("llm_config", ""), ("prefill_config", "prefill"), ("decode_config", "decode")):
        cfg = args.map(key)
        if cfg is not None:
            out.append((role, cfg))
    return out


def _names_llm(app: Mapping) -> bool:
    text = f"{app.value('import_path') or ''} {app.value('name') or ''}".lower()
    return any(w in text for w in ("llm", "vllm", "rayllm", "chat", "text_generation", "text-generation"))


def _model_in_code(ctx: ct.ObjectContext, app: Mapping, gpu_pods: tuple[Deployment, int]) -> Deployment:
    """A Serve app that names no model in the file: its code (import_path) or files it loads choose it."""
    path = ctx.file
    label = app.value("name") or "app"
    node = app.scalar("import_path") or app
    d = Deployment(path, node.where(path), ctx.kind, f"{ctx.name}/{label}", ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    models = app.at("args", "models")
    if isinstance(models, Sequence) and models.items:
        first = models.items[0]
        why = f"model set in {first.value if isinstance(first, Scalar) else 'files'} that the app loads, not in this file"
    else:
        why = f"model set in application code ({app.value('import_path') or 'import_path not given'}), not in this file"
    d.engine = inferred("other", why, node.where(path))
    d.issues.append(
        Issue(NOT_CHECKABLE, f"{d.label()}: {why}; its memory cannot be checked", node.where(path))
    )
    d.extra["unsupported"] = stated("app-code", node.where(path))
    _copy_gpus(d, gpu_pods)
    return d


_NUMBERED = re.compile(r"^MODEL_(\d+)_(.+)$")
_PIP_VLLM = re.compile(r"^vllm(?:\[[^\]]*\])?==(\d+\.\d+(?:\.\d+)?)")


def _vllm_evidence(ctx: ct.ObjectContext, app: Mapping) -> tuple[str | None, str] | None:
    """(version or None, how we know) when the app runs vLLM: pip requirement, import path, or image."""
    pip = app.at("runtime_env", "pip")
    for node in pip.items if isinstance(pip, Sequence) else ():
        text = str(node.value) if isinstance(node, Scalar) else ""
        m = _PIP_VLLM.match(text.strip())
        if m:
            return m.group(1), f"pip requirement {text.strip()}"
        if text.strip().startswith("vllm"):
            return None, f"pip requirement {text.strip()}"
    vllm = engines.get("vllm")
    if vllm.script_word in str(app.value("import_path") or "").lower():
        return None, f"import_path {app.value('import_path')}"
    for spec in pods.find_pod_specs(ctx.root):
        for c in pods.containers(spec.node):
            image = str(c.value("image") or "").lower()
            if any(word in image for word in vllm.image_words):
                return None, f"image {c.value('image')}"
    return None


def llm_config_deployment(
    ctx: ct.ObjectContext, app: Mapping, cfg: Mapping, gpu_pods: tuple[Deployment, int], role: str = ""
) -> Deployment:
    path = ctx.file
    model_id = cfg.at("model_loading_config", "model_id")
    source = cfg.at("model_loading_config", "model_source")
    label = model_id.value if isinstance(model_id, Scalar) else app.value("name")
    name = f"{ctx.name}/{label}" if ctx.name else str(label)
    d = Deployment(path, cfg.where(path), ctx.kind, name + (f"/{role}" if role else ""), ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    d.engine = inferred("vllm", "Ray Serve LLM (ray.serve.llm) runs vLLM", cfg.where(path))
    node = source if isinstance(source, Scalar) and source.value else model_id
    if isinstance(node, Scalar) and node.value:
        d.model = stated(str(node.value), node.where(path))
    from kvlint.extract.pod.argv import EnvVar

    env: dict[str, EnvVar] = {}
    env_vars = cfg.at("runtime_env", "env_vars")
    for key, n in env_vars.items() if isinstance(env_vars, Mapping) else ():
        if isinstance(n, Scalar) and n.value is not None:
            env[key] = EnvVar(str(n.value), n.where(path))
    engines.get("vllm").read_options(
        d, engine_kwargs_tokens(cfg.map("engine_kwargs"), path), env, positional_model=False, argv=False
    )
    adapters.record(d, adapters.ray_lora_config(cfg, path))
    replicas = cfg.at("deployment_config", "num_replicas")
    if isinstance(replicas, Scalar) and isinstance(replicas.value, int):
        d.extra["replicas"] = stated(replicas.value, replicas.where(path))
    accel = cfg.scalar("accelerator_type")
    if accel is not None and accel.value:
        d.gpu = stated(str(accel.value), accel.where(path), "Ray Serve LLM accelerator_type")
    _copy_gpus(d, gpu_pods)
    return d


def engine_kwargs_tokens(kwargs: Mapping | None, path: str) -> list[Token]:
    """Ray Serve LLM passes engine_kwargs to vLLM's AsyncEngineArgs: every key is a vLLM engine
    argument (`max_model_len` is --max-model-len); dict values (hf_overrides, …) are JSON."""
    import json

    from kvlint.load.tree import to_plain

    tokens: list[Token] = []
    for key, n in kwargs.items() if kwargs is not None else ():
        option = "--" + key.replace("_", "-")
        where = kwargs.keys[key].where(path) if key in kwargs.keys else n.where(path)  # type: ignore[union-attr]
        if isinstance(n, Scalar):
            if n.value is None:
                continue
            if isinstance(n.value, bool):
                tokens.append(Token(option if n.value else "--no-" + option[2:], scalar_where(n, path)))
            else:
                tokens += [Token(option, where), Token(str(n.value), scalar_where(n, path))]
        else:
            try:
                text = json.dumps(to_plain(n))
            except ValueError:
                continue
            tokens += [Token(option, where), Token(text, n.where(path))]
    return tokens


def _copy_gpus(d: Deployment, gpu_pods: tuple[Deployment, int]) -> None:
    scratch, _count = gpu_pods
    if d.gpu is None and scratch.gpu is not None:
        d.gpu = scratch.gpu
    if scratch.accelerator != "gpu":
        d.accelerator = scratch.accelerator
    tp = int(d.tensor_parallel.value) if d.tensor_parallel else 1
    pp = int(d.pipeline_parallel.value) if d.pipeline_parallel else 1
    if d.gpus is None and (tp * pp > 1 or scratch.gpus_per_pod is not None):
        # Ray places one replica's tp x pp GPU workers across the GPU pods of the cluster.
        d.gpus = inferred(
            tp * pp, "Ray schedules tensor_parallel x pipeline_parallel GPU workers per replica", d.where
        )
    d.gpus_per_pod, d.gpu_resource = scratch.gpus_per_pod, scratch.gpu_resource
    d.shm_size, d.has_shm = scratch.shm_size, scratch.has_shm
    if scratch.placement is not None:
        d.placement = scratch.placement
