"""Helm values files that configure model servers (documents without apiVersion/kind).

- vLLM production-stack: `servingEngineSpec.modelSpec[]` (modelURL, requestGPU, vllmConfig, raySpec),
  and the operator's VLLMRuntime CRD (same fields under spec.model / spec.vllmConfig / spec.deploymentConfig).
- KubeAI models chart: `catalog.<name>: {url, engine, args, resourceProfile}`.
- The ollama chart (otwld/ollama-helm): each model in `ollama.models` (extract/charts/ollama_chart.py).
- Charts in the vLLM Helm chart's shape and similar (`image.repository` naming the engine, `model.id`,
  `image.command`, `resources`, `nodeSelector`, `tensorParallelSize`, `maxModelLen`, `gpuModels` as the
  node affinity the vLLM chart renders), and charts that write the command line from keys of their own
  (extract/charts/chart_layouts.py: the OPEA vllm chart's LLM_MODEL_ID / extraCmdArgs / shmSize).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint import engines
from kvlint.bounds import show
from kvlint.codes import UNKNOWN_MODEL, UNPARSED_SETTING
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.charts import chart_layouts, custom_chart, nim_chart, ollama_chart
from kvlint.extract.charts.production_stack_keys import serving_engine_issues
from kvlint.extract.kinds.kubeai import kubeai_spec
from kvlint.extract.kinds.production_stack import PS_CONFIG, production_stack_entry
from kvlint.extract.pod import container as ct
from kvlint.extract.pod.argv import option_tokens
from kvlint.findings import Issue, IssueKind, Location, Severity
from kvlint.load.nearby import Nearby
from kvlint.load.tree import Mapping, Node, Scalar, Sequence

# The engine whose options these charts' own keys set (production-stack vllmConfig, the chart LAYOUTS).
CHART_ENGINE = "vllm"

if TYPE_CHECKING:
    from kvlint.extract.charts.chart_layouts import Layout
    from kvlint.extract.pod.argv import EnvVar
    from kvlint.extract.pod.engine_args import Launch


def _ctx(
    root: Mapping,
    path: str,
    lines: list[str],
    base_dir: str,
    kind: str = "values",
    nearby: Nearby | None = None,
) -> ct.ObjectContext:
    return ct.ObjectContext(path, lines, base_dir, root, kind, "", {}, nearby)


def always(root: Mapping) -> bool:
    """The last reader tried: Helm values of any chart kvlint knows, else nothing."""
    return True


def extract(
    root: Mapping, path: str, base_dir: str, lines: list[str], nearby: Nearby | None = None
) -> list[Deployment]:
    ctx = _ctx(root, path, lines, base_dir, nearby=nearby)
    out = _production_stack(ctx, root) + _kubeai_catalog(ctx, root)
    if not out:
        out = _chart_of_its_own(ctx, root, nearby)
    for d in out:
        ct.finish(d)
    return out


def _production_stack(ctx: ct.ObjectContext, root: Mapping) -> list[Deployment]:
    out: list[Deployment] = []
    spec_list = root.at("servingEngineSpec", "modelSpec")
    if isinstance(spec_list, Sequence):
        for i, entry in enumerate(spec_list.items):
            # `enabled: false` entries are not deployed (production-stack values.yaml: "Default to true")
            if isinstance(entry, Mapping) and entry.value("enabled") is not False:
                out.extend(production_stack_entry(ctx, entry, f"servingEngineSpec.modelSpec[{i}]"))
        if out:
            out[0].issues.extend(serving_engine_issues(root, ctx.file))
    return out


def _kubeai_catalog(ctx: ct.ObjectContext, root: Mapping) -> list[Deployment]:
    out: list[Deployment] = []
    catalog = root.map("catalog")
    if catalog is not None and all(isinstance(v, Mapping) for _, v in catalog.items()):
        for name, entry in catalog.items():
            if isinstance(entry, Mapping) and ("url" in entry or "engine" in entry):
                d = kubeai_spec(ctx, entry, f"catalog.{name}")
                if d is not None:
                    out.append(d)
    return out


def _chart_of_its_own(ctx: ct.ObjectContext, root: Mapping, nearby: Nearby | None) -> list[Deployment]:
    """The first chart layout that reads these values: ollama, nim-llm, subcharts, engine-args charts, then
    charts in the vLLM chart's shape."""
    if ollama_chart.is_ollama_chart(root):
        return ollama_chart.ollama_values(ctx, root)
    if nim_chart.is_nim_chart(root) and nim_chart.of_nim_llm(nearby):
        return [nim_chart.nim_values(ctx, root)]
    out = [
        subchart(ctx, name, section, layout, image)
        for name, section, layout, image in chart_layouts.subchart_sections(root)
    ]
    if out:
        return out
    if chart_layouts.is_engine_args_chart(root):
        return [engine_args_chart(ctx, root)]
    d = chart_values(ctx, root)
    return [d] if d is not None else []


def _image_repository(root: Mapping) -> Scalar | None:
    """`image.repository`, or `inference.modelServer.image.repository`."""
    image = root.map("image")
    repo = image.scalar("repository") if image is not None else None
    if repo is None or repo.value is None:
        inference = root.at("inference", "modelServer", "image", "repository")
        return inference if isinstance(inference, Scalar) else None
    return repo


def _chart_container(root: Mapping, image: Mapping | None, repo: Scalar, layout: Layout | None) -> Mapping:
    """The container the chart renders: image.command (or the layout's argument list), the image, resources."""
    cmd = image.seq("command") if image is not None else None
    fake = Mapping((root.line, root.col, root.end_line, root.end_col))
    if cmd is not None:
        fake.values["command"] = cmd
    extra_args = chart_layouts.args(layout, root) if layout is not None else None
    if extra_args is None and _custom(
        root, layout
    ):  # an in-house chart's engine arguments (charts/custom_chart)
        found = custom_chart.args(root)
        extra_args = found[0] if found is not None else None
    if extra_args is not None:
        fake.values["args"] = extra_args
    fake.values["image"] = repo
    for key in ("resources",):
        if key in root:
            fake.values[key] = root.values[key]
    return fake


def _chart_model(root: Mapping) -> Node | None:
    return (
        root.at("model", "id") or root.at("model", "name") or root.scalar("model") or root.scalar("modelId")
    )


def chart_values(ctx: ct.ObjectContext, root: Mapping) -> Deployment | None:
    """Values in the shape of the vLLM Helm chart (image + command/model + resources + nodeSelector)."""
    path = ctx.file
    repo = _image_repository(root)
    if repo is None:
        return None
    image = root.map("image")
    if image is None:  # the ai-on-eks inference chart: inference.modelServer.image.{repository,tag}
        nested = root.at("inference", "modelServer", "image")
        image = nested if isinstance(nested, Mapping) else None
    text = str(repo.value)
    tag = image.scalar("tag") if image is not None else None
    full = f"{text}:{tag.value}" if tag is not None else text
    layout = chart_layouts.layout_of(root)
    fake = _chart_container(root, image, repo, layout)
    from kvlint.extract.pod.argv import container_commands, read_env
    from kvlint.extract.pod.engine_args import find_launch

    env = read_env(fake, path)
    launch = find_launch(container_commands(fake, path, ctx.lines, env), full)
    if launch is None:
        return None
    d = Deployment(path, root.where(path), "values", "(root)", ctx.base_dir)
    d.engine = stated(launch.engine, repo.where(path), launch.how)
    d.image = stated(full, repo.where(path))
    version = ct.image_version(full, launch.engine)
    if version:
        d.engine_version = inferred(version, f"from the image tag {full}", (tag or repo).where(path))
    _read_chart_engine(d, launch, root, env, repo, path, layout)
    model_node = _chart_model(root)
    if (
        d.model is None
        and isinstance(model_node, Scalar)
        and model_node.value
        and "${" not in str(model_node.value)
    ):
        d.model = stated(str(model_node.value), model_node.where(path))
    ct.add_container_facts(d, ctx, root, fake)
    if _custom(root, layout):
        _custom_keys(d, root, path)
    _gpu_models(d, root, path)
    replicas = root.scalar("replicaCount")  # both charts: `replicas: {{ .Values.replicaCount }}`
    if replicas is not None and isinstance(replicas.value, int):
        d.extra["replicas"] = stated(replicas.value, replicas.where(path), "replicaCount")
    if layout is not None and launch.engine == CHART_ENGINE:
        chart_layouts.apply(d, layout, root, path)
    d.issues.extend(chart_layouts.unread_keys(root, path))
    if d.model is None and "model" not in root:
        d.issues.append(_model_not_stated(d))
    return d


def _custom(root: Mapping, layout: Layout | None) -> bool:
    """Values no chart kvlint knows claims: an in-house chart's keys are read by class."""
    return layout is None and not chart_layouts.is_vllm_chart(root)


def _custom_keys(d: Deployment, root: Mapping, path: str) -> None:
    """The model and GPU count an in-house chart's own keys give, when the command line and resources do not."""
    model = custom_chart.model(root) if d.model is None else None
    if model is not None:
        node, key = model
        d.model = inferred(str(node.value), f"`{key}`: the chart's model key", node.where(path))
    gpus = custom_chart.gpus(root) if d.gpus_per_pod is None and "gpus_per_pod" not in d.unreadable else None
    if gpus is not None:
        node, key = gpus
        d.gpus_per_pod = inferred(node.value, f"`{key}`: the chart's GPU count key", node.where(path))


def _read_chart_engine(
    d: Deployment,
    launch: Launch,
    root: Mapping,
    env: dict[str, EnvVar],
    repo: Scalar,
    path: str,
    layout: Layout | None = None,
) -> None:
    """The engine's options: vLLM's command line plus the chart's own keys (PS_CONFIG), or the other engines'."""
    if launch.engine == CHART_ENGINE:
        entries = [(opt, root.scalar(key)) for key, opt in PS_CONFIG.items() if root.scalar(key) is not None]
        model = chart_layouts.model_tokens(layout, root, path) if layout is not None else []
        tokens = list(launch.tokens) + model + option_tokens(entries, path)  # type: ignore[arg-type]
        engines.get(CHART_ENGINE).read_options(d, tokens, env)
    elif engines.known(launch.engine):
        ct.read_engine(d, launch, env)
    else:
        ct.mark_unsupported(d, launch.engine, repo.where(path))


def _gpu_count(root: Mapping, side: str) -> int:
    node = root.at("resources", side, "nvidia.com/gpu")
    value = node.value if isinstance(node, Scalar) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _gpu_models(d: Deployment, root: Mapping, path: str) -> None:
    """`gpuModels` as the vLLM chart renders it: node affinity `nvidia.com/gpu.product In gpuModels`, only when
    resources.requests and resources.limits both ask for nvidia.com/gpu (vllm-project/vllm
    examples/online_serving/chart-helm/templates/deployment.yaml); a value no node carries keeps the pod Pending."""
    gpu_models = root.seq("gpuModels")
    if gpu_models is None or not gpu_models.items:
        return
    if _gpu_count(root, "requests") <= 0 or _gpu_count(root, "limits") <= 0:
        return
    values = [str(v.value) for v in gpu_models.items if isinstance(v, Scalar) and v.value]
    if values:
        ct.apply_labels(d, [("nvidia.com/gpu.product", values, gpu_models.items[0].where(path))])


def engine_args_chart(ctx: ct.ObjectContext, root: Mapping) -> Deployment:
    """A chart that starts vLLM with `vllm_engine_args` or TGI with `tgi_engine_args` (flag -> value),
    `model` and `gpus` (chart_layouts: silogen/ai-workloads llm-inference-vllm / llm-inference-tgi);
    `gpus` left out is the chart's default."""
    from kvlint.deployment import default
    from kvlint.extract.pod.argv import Token, read_env

    key = chart_layouts.engine_args_key(root) or "vllm_engine_args"
    engine, model_flag, shard_flag, how = chart_layouts.ENGINE_ARGS_KEYS[key]
    path, src = ctx.file, chart_layouts.SILOGEN_SOURCE.replace("vllm", engine)
    d = Deployment(path, root.where(path), "values", "(root)", ctx.base_dir)
    _engine_and_image(d, root, path, engine, how)
    model = root.scalar("model")
    gpus = root.scalar("gpus")
    tokens = chart_layouts.engine_args_tokens(root, path, key)
    schema = src.replace("values.yaml", "values.schema.json")
    refused = engine_args_problems(root, path, key, schema)
    for message, where in refused:
        d.issues.append(Issue(UNPARSED_SETTING, message, where))
    if model is not None and model.value:
        text = str(model.value)
        if text.startswith("s3://"):  # the chart copies it from bucket storage to /workload/<path>
            text = "/workload/" + text.removeprefix("s3://").rstrip("/")
        tokens += [Token(model_flag, model.where(path)), Token(text, model.where(path))]
    count = _chart_gpus(d, root, gpus)
    if gpus is not None and count is not None:
        tokens += [Token(shard_flag, gpus.where(path)), Token(str(count), gpus.where(path))]
    engines.get(engine).read_options(
        d, tokens, read_env(Mapping((root.line, root.col, root.end_line, root.end_col)), path)
    )
    if count is not None and gpus is not None:
        d.gpus_per_pod = stated(count, gpus.where(path), "amd.com/gpu")
        d.gpu_resource = "amd.com/gpu"
    elif "gpus" not in root:
        n = chart_layouts.SILOGEN_GPUS
        d.gpus_per_pod = default(n, "amd.com/gpu")  # the chart's default `gpus`, named on the TP below
        d.gpu_resource = "amd.com/gpu"
        d.tensor_parallel = default(n, f"{shard_flag} = the chart's default `gpus` ({src})")
    shm = root.at("storage", "dshm", "sizeLimit") or root.at("dshm", "sizeLimit")
    if isinstance(shm, Scalar) and shm.value:  # the template's memory-backed emptyDir at /dev/shm
        d.has_shm = True
        d.shm_size = stated(str(shm.value), shm.where(path), "the chart's memory-backed /dev/shm")
    replicas = root.scalar("replicas")
    if replicas is not None and isinstance(replicas.value, int):
        d.extra["replicas"] = stated(replicas.value, replicas.where(path), "replicas")
    if d.model is None and "model" not in root:
        d.issues.append(_model_not_stated(d))
    return d


def _engine_and_image(d: Deployment, root: Mapping, path: str, engine: str, how: str) -> None:
    """The engine the chart runs, and its release from the image's tag."""
    image = root.scalar("image")  # left out: the chart's default image, not assumed (it differs per chart)
    if image is not None and image.value:
        d.image = stated(str(image.value), image.where(path))
    d.engine = stated(engine, (image or root).where(path), f"the chart runs {how}")
    version = ct.image_version(str(d.image.value), engine) if d.image is not None else None
    if version and d.image is not None:
        d.engine_version = inferred(version, f"from the image tag {d.image.value}", d.image.where)


def _chart_gpus(d: Deployment, root: Mapping, gpus: Scalar | None) -> int | None:
    """`gpus` as a count; None when left out or refused (engine_args_problems said so: TP unreadable)."""
    count = (
        gpus.value
        if gpus is not None and isinstance(gpus.value, int) and not isinstance(gpus.value, bool)
        else None
    )
    if count is not None and count < 1 or "gpus" in root and count is None:
        d.unreadable.append("tensor_parallel")
        return None  # refused above: no GPU count, and not the chart's default either
    return count


def subchart(ctx: ct.ObjectContext, name: str, section: Mapping, layout: Layout, image: str) -> Deployment:
    """A subchart's values inside an umbrella chart's values (under the subchart's name), read as the
    subchart renders them; what the section leaves out is the subchart's default."""
    from kvlint.deployment import default
    from kvlint.extract.pod.argv import scalar_tokens

    path = ctx.file
    d = Deployment(path, section.where(path), "values", name, ctx.base_dir)
    img = section.at("image", "repository")
    if isinstance(img, Scalar) and img.value:
        d.image = stated(str(img.value), img.where(path))
    else:
        d.image = default(image, f"the {layout.name}'s default image ({layout.source})")
    d.engine = stated("vllm", section.where(path), f"`{name}:` holds the {layout.name}'s values")
    extra = section.seq(layout.args_key)
    tokens = (scalar_tokens(extra, path) if extra is not None else []) + chart_layouts.model_tokens(
        layout, section, path
    )
    engines.get("vllm").read_options(d, tokens, {})
    fake = Mapping((section.line, section.col, section.end_line, section.end_col))
    if "resources" in section:
        fake.values["resources"] = section.values["resources"]
    ct.add_container_facts(d, ctx, section, fake)
    chart_layouts.apply(d, layout, section, path)
    replicas = section.scalar("replicaCount")
    if replicas is not None and isinstance(replicas.value, int):
        d.extra["replicas"] = stated(replicas.value, replicas.where(path), "replicaCount")
    return d


def engine_args_problems(root: Mapping, path: str, key: str, src: str) -> list[tuple[str, Location]]:
    """Values of a silogen-style chart that its values.schema.json refuses, so `helm install` stops:
    `gpus` not an integer of at least 1, an engine argument that is a list or a map (each takes a string
    or null), `model` not a string."""
    found: list[tuple[str, Location]] = []
    gpus = root.get("gpus")
    if gpus is not None:
        value = gpus.value if isinstance(gpus, Scalar) else None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            shown = _shown(value) if isinstance(gpus, Scalar) else f"({_kind(gpus)})"
            found.append(
                (
                    f"`gpus` {shown}: the chart takes an integer of at least 1 ({src}), so"
                    " Helm refuses these values; the GPU count is unknown",
                    gpus.where(path),
                )
            )
    model = root.get("model")
    if model is not None and not isinstance(model, Scalar):
        found.append((f"`model` is {_kind(model)}: the chart takes a string ({src})", model.where(path)))
    args = root.map(key)
    for name, node in args.items() if args is not None else ():
        if not isinstance(node, Scalar):
            found.append(
                (
                    f"`{key}.{name}` is {_kind(node)}: the chart takes a string (or null) for"
                    f" each engine argument ({src}), so Helm refuses these values",
                    node.where(path),
                )
            )
    return found


def _kind(node: Node) -> str:
    return "a list" if isinstance(node, Sequence) else "a map"


def _shown(value: object) -> str:
    """A scalar as YAML wrote it: null, true, "2" (a string), 2.5."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return f"{show(value, 40)!r} (a string)" if isinstance(value, str) else show(value, 40)


def _model_not_stated(d: Deployment) -> Issue:
    """Values that name no model: the chart's own default or the install decides; not checked, and nothing
    written is wrong (an info)."""
    return Issue(
        UNKNOWN_MODEL,
        "model is not stated in these values",
        d.where,
        severity=Severity.INFO,
        kind=IssueKind.MODEL_NOT_STATED,
    )
