"""llmaz (InftyAI/llmaz@3c13ff3) Playground with its OpenModel(s) and BackendRuntime, read as llmaz's
controllers build the pod (pkg/controller/inference/playground_controller.go buildTemplate,
service_controller.go, pkg/controller_helper/backendruntime/backendruntime.go):

- the backend is `backendRuntimeConfig.backendName`, default `vllm` (api/inference/v1alpha1
  config_types.go DefaultBackend); its BackendRuntime gives the image, command and a recommended
  config (`configName`, else `speculative-decoding` when a model has role draft, else `default`: its
  args with `{{ .ModelPath }}` / `{{ .DraftModelPath }}` filled, resources, sharedMemorySize);
  the Playground's own args are appended, its resources merged over the config's, its `version` wins;
- the model is the main OpenModel's `source.modelHub.modelID` (the model loader puts the Hub model at
  /workspace/models/models--org--name, which the args name); its GPUs are the limits of the first
  inference flavor (the claim's `inferenceFlavors[0]`, else the model's first flavor), written over
  the container's requests and limits (service_controller.go).
A BackendRuntime in this file or beside it is used; else llmaz's stock one from its chart
(chart/templates/backends/*.yaml, images from chart/values.global.yaml), named as a default.
"""

from __future__ import annotations

import re

from kvlint import engines
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, default, inferred, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic
from kvlint.findings import Issue, Severity
from kvlint.load.nearby import Found, object_name
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import record

SOURCE = "InftyAI/llmaz@3c13ff3"
DEFAULT_BACKEND = "vllm"
STOCK_SHM = "2Gi"


@record(frozen=True)
class StockRuntime:
    """One of llmaz's stock BackendRuntimes, the parts kvlint reads: `name` is its metadata.name (the
    backendName that picks it, like a BackendRuntime in the file), `configs` its recommended configs' args."""

    name: str
    image: str
    command: tuple[str, ...]
    configs: dict[str, tuple[str, ...]]


# the llmaz chart's stock BackendRuntimes (chart/templates/backends/<name>.yaml; images from
# chart/values.global.yaml): the default and speculative-decoding configs
STOCK_RUNTIMES = (
    StockRuntime(
        "vllm",
        "vllm/vllm-openai:v0.7.3",
        ("python3", "-m", "vllm.entrypoints.openai.api_server"),
        {
            "default": (
                "--model",
                "{{ .ModelPath }}",
                "--served-model-name",
                "{{ .ModelName }}",
                "--host",
                "0.0.0.0",
            ),
            "speculative-decoding": (
                "--model",
                "{{ .ModelPath }}",
                "--served-model-name",
                "{{ .ModelName }}",
                "--speculative_model",
                "{{ .DraftModelPath }}",
                "--num_speculative_tokens",
                "5",
                "-tp",
                "1",
            ),
        },
    ),
    StockRuntime(
        "sglang",
        "lmsysorg/sglang:v0.4.5-cu121",
        ("python3", "-m", "sglang.launch_server"),
        {"default": ("--model-path", "{{ .ModelPath }}", "--served-model-name", "{{ .ModelName }}")},
    ),
    StockRuntime(
        "tgi",
        "ghcr.io/huggingface/text-generation-inference:2.3.1",
        (),
        {"default": ("--model-id", "{{ .ModelPath }}", "--port", "8080")},
    ),
)
STOCK = {r.name: r for r in STOCK_RUNTIMES}


def is_llmaz(root: Mapping) -> bool:
    return str(root.value("apiVersion") or "").startswith(("inference.llmaz.io/", "llmaz.io/"))


def playground(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    claims = _claims(spec)
    if not claims:
        return []
    cfg = spec.map("backendRuntimeConfig") or synthetic.mapping(spec, {})
    backend_node = cfg.scalar("backendName")
    backend = str(backend_node.value) if backend_node is not None and backend_node.value else DEFAULT_BACKEND
    models = [_find(ctx, "OpenModel", name) for name, _role, _w in claims]
    d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    main = models[0]
    if main is None:
        return [
            _not_found(d, ctx, f"its OpenModel {claims[0][0]} is not in this file or a YAML file beside it")
        ]
    runtime = _find(ctx, "BackendRuntime", backend)
    config_name = _config_name(cfg, claims)
    pod, how = _pod(ctx, spec, cfg, runtime, backend, config_name, main, models)
    if pod is None:
        return [_not_found(d, ctx, how)]
    container = pod.seq("containers").items[0]  # type: ignore[union-attr]
    assert isinstance(container, Mapping)
    built = ct.build(ctx, pod, container)
    if built is None:
        return [_not_found(d, ctx, f"{how} runs no engine kvlint reads")]
    model_id = main.root.at("spec", "source", "modelHub", "modelID")
    filename = main.root.at("spec", "source", "modelHub", "filename")
    if isinstance(model_id, Scalar) and model_id.value:
        built.model = stated(
            str(model_id.value), model_id.where(main.file), "OpenModel source.modelHub.modelID"
        )
        if isinstance(filename, Scalar) and filename.value:
            # the loader fetches only that file and the engine is given it (pkg/controller_helper/
            # modelsource/modelhub.go ModelPath: CONTAINER_MODEL_PATH + fileName): a GGUF file's name
            # states its quant type (kvlint/catalog/gguf.py)
            built.model = stated(
                f"{model_id.value}/{filename.value}",
                filename.where(main.file),
                "OpenModel source.modelHub.modelID + filename",
            )
    built.extra["runtime"] = stated(how, ctx.where)
    if runtime is None and built.engine is not None:  # no BackendRuntime found: llmaz's stock one, a default
        built.engine = default(built.engine.value, f"{how}, llmaz's default backend", built.engine.where)
    if runtime is None and built.has_shm:
        built.shm_size = default(
            STOCK_SHM, f"sharedMemorySize of {how}", built.shm_size.where if built.shm_size else None
        )
    return [built]


def _claims(spec: Mapping) -> list[tuple[str, str, Node]]:
    """(model name, role, node) of each claimed model, the main one first."""
    one = spec.map("modelClaim")
    if one is not None and isinstance(one.value("modelName"), str):
        return [(str(one.value("modelName")), "main", one)]
    many = spec.at("modelClaims", "models")
    out: list[tuple[str, str, Node]] = []
    for m in many.items if isinstance(many, Sequence) else ():
        if isinstance(m, Mapping) and isinstance(m.value("name"), str):
            out.append((str(m.value("name")), str(m.value("role") or "main"), m))
    out.sort(key=lambda c: c[1] != "main")
    return out


def _config_name(cfg: Mapping, claims: list[tuple[str, str, Node]]) -> str:
    """pkg/controller_helper/helper.go RecommendedConfigName: configName, else by model roles."""
    named = cfg.value("configName")
    if isinstance(named, str) and named:
        return named
    return "speculative-decoding" if any(role == "draft" for _n, role, _w in claims) else "default"


def _pod(ctx, spec, cfg, runtime: Found | None, backend, config_name, main: Found, models):
    """The model-runner pod as buildTemplate renders it, and how the runtime was found (or, with no
    pod, why not)."""
    if runtime is not None:
        parts, how = _runtime_parts(runtime, cfg, backend, config_name)
    else:
        parts, how = _stock_parts(ctx, cfg, backend, config_name)
    if parts is None:
        return None, how
    return _render_pod(ctx, spec, cfg, main, models, *parts), how


def _runtime_parts(runtime: Found, cfg, backend, config_name):
    """(image, command, args, resources, shared memory) from a BackendRuntime found in or beside
    the file and its recommended config; None and why when it has neither."""
    rspec = runtime.root.map("spec")
    if rspec is None:
        return None, f"BackendRuntime {backend} has no spec"
    rspec = rspec if runtime.same_file else synthetic.in_file(rspec, runtime.file)  # type: ignore[assignment]
    how = f"BackendRuntime {backend} ({'this file' if runtime.same_file else runtime.file})"
    config = next(
        (
            c
            for c in rspec.seq("recommendedConfigs") or ()
            if isinstance(c, Mapping) and c.value("name") == config_name
        ),
        None,
    )
    if config is None:
        return None, f"{how} has no recommended config {config_name}"
    image = f"{rspec.value('image') or ''}:{cfg.value('version') or rspec.value('version') or ''}"
    parts = (
        image,
        rspec.get("command"),
        config.get("args"),
        config.get("resources"),
        config.get("sharedMemorySize"),
    )
    return parts, how


def _stock_parts(ctx, cfg, backend, config_name):
    """The same parts from llmaz's stock BackendRuntime of that name; None and why when there is none."""
    stock = STOCK.get(backend)
    if stock is None or config_name not in stock.configs:
        return None, _no_stock(backend, config_name, stock is None)
    how = f"llmaz's stock BackendRuntime {backend} ({SOURCE} chart/templates/backends/{backend}.yaml)"
    version = cfg.value("version")
    image = stock.image if not version else f"{stock.image.split(':')[0]}:{version}"
    command = synthetic.from_data(list(stock.command), ctx.root)
    args = synthetic.from_data(list(stock.configs[config_name]), ctx.root)
    return (image, command, args, None, synthetic.scalar(ctx.root, STOCK_SHM)), how


def _no_stock(backend: str, config_name: str, no_runtime: bool) -> str:
    """Why a backend with no BackendRuntime in or beside the file has no pod: the engine packages say which
    llmaz backend names are theirs."""
    engine = engines.called("llmaz", backend) if no_runtime else None
    if engine is not None:  # kvlint models the engine, but not llmaz's stock runtime for it
        return (
            f"llmaz backend {backend} runs {engine.display} from llmaz's stock BackendRuntime, which is not in"
            " kvlint's table of llmaz runtimes, so its command line and resources are unknown"
        )
    return f"its BackendRuntime {backend} (config {config_name}) is not in this file or beside it"


def _render_pod(ctx, spec, cfg, main: Found, models, image, command, args, resources, shm):
    """The pod: the runtime's args rendered with the model's paths, then the playground's own; the
    resources merged with the flavor's limits; /dev/shm mounted when the runtime sizes it."""
    paths = {"ModelPath": _model_path(main), "ModelName": object_name(main.root)}
    if len(models) > 1 and models[1] is not None:
        paths["DraftModelPath"] = _model_path(models[1])
    rendered = [_render(a, paths) for a in (args.items if isinstance(args, Sequence) else [])]
    mine = cfg.seq("args")
    all_args = [*rendered, *(mine.items if mine is not None else [])]
    merged_res = synthetic.strategic_merge(resources, cfg.get("resources"))
    flavor = _flavor(spec, main)
    merged_res = _flavor_limits(flavor, merged_res)
    container = synthetic.mapping(
        ctx.root,
        {
            "name": synthetic.scalar(ctx.root, "model-runner"),
            "image": synthetic.scalar(ctx.root, image),
            "command": command if isinstance(command, Sequence) and command.items else None,
            "args": synthetic.sequence(ctx.root, all_args),
            "resources": merged_res,
            "volumeMounts": synthetic.from_data([{"name": "dshm", "mountPath": "/dev/shm"}], ctx.root)
            if shm
            else None,
        },
    )
    shm_size = shm if isinstance(shm, Scalar) else synthetic.scalar(ctx.root, STOCK_SHM)
    pod = synthetic.mapping(
        ctx.root,
        {
            "containers": synthetic.sequence(ctx.root, [container]),
            "nodeSelector": flavor.get("nodeSelector") if flavor is not None else None,
        },
    )
    if shm:
        pod.values["volumes"] = synthetic.sequence(
            ctx.root,
            [
                synthetic.mapping(
                    shm_size,
                    {
                        "name": synthetic.scalar(shm_size, "dshm"),
                        "emptyDir": {"medium": synthetic.scalar(shm_size, "Memory"), "sizeLimit": shm_size},
                    },
                )
            ],
        )
        pod.keys["volumes"] = synthetic.scalar(ctx.root, "volumes")
    return pod


def _flavor(spec: Mapping, main: Found) -> Mapping | None:
    """The inference flavor in force: the claim's `inferenceFlavors[0]`, else the model's first."""
    flavors = main.root.at("spec", "inferenceConfig", "flavors")
    if not isinstance(flavors, Sequence) or not flavors.items:
        return None
    claimed = spec.at("modelClaim", "inferenceFlavors") or spec.at("modelClaims", "inferenceFlavors")
    first = claimed.items[0] if isinstance(claimed, Sequence) and claimed.items else None
    want = first.value if isinstance(first, Scalar) else None
    flavor = next(
        (f for f in flavors.items if isinstance(f, Mapping) and (want is None or f.value("name") == want)),
        None,
    )
    if not isinstance(flavor, Mapping):
        return None
    return flavor if main.same_file else synthetic.in_file(flavor, main.file)  # type: ignore[return-value]


def _flavor_limits(flavor: Mapping | None, resources: Node | None) -> Node | None:
    """The flavor's limits written over requests and limits (service_controller.go)."""
    limits = flavor.map("limits") if flavor is not None else None
    if limits is None:
        return resources
    patch = synthetic.mapping(limits, {"requests": limits, "limits": limits})
    return synthetic.strategic_merge(resources, patch)


def _render(node: Node, paths: dict[str, str]) -> Node:
    if not isinstance(node, Scalar) or not isinstance(node.value, str) or "{{" not in node.value:
        return node
    text = node.value
    for key, value in paths.items():
        for spelled in (f"{{{{ .{key} }}}}", f"{{{{.{key}}}}}"):
            text = text.replace(spelled, value)
    out = Scalar(text, text, node.tag, node.quoted, (node.line, node.col, node.end_line, node.end_col))
    out.file = node.file
    return out


def _model_path(model: Found) -> str:
    """The Hub id: the model loader puts it in the Hugging Face cache layout the engine reads it from."""
    mid = model.root.at("spec", "source", "modelHub", "modelID")
    filename = model.root.at("spec", "source", "modelHub", "filename")
    if isinstance(mid, Scalar) and mid.value and isinstance(filename, Scalar) and filename.value:
        return f"{mid.value}/{filename.value}"  # one file of the repository (a GGUF file names its type)
    return (
        str(mid.value)
        if isinstance(mid, Scalar) and mid.value
        else f"/workspace/models/{object_name(model.root)}"
    )


def _find(ctx: ct.ObjectContext, kind: str, name: str) -> Found | None:
    found = ctx.nearby.named((kind,), name) if ctx.nearby is not None else []
    return next((f for f in found if is_llmaz(f.root)), None)


def _not_found(d: Deployment, ctx: ct.ObjectContext, why: str) -> Deployment:
    return ct.not_checked(d, ctx.where, "llmaz backend", why)


# modelhub.go ModelPath: the model loader puts a Hub model at /workspace/models/models--ORG--NAME
LOADER_PATH = re.compile(r"^/workspace/models/models--([^/]+?)--([^/]+?)/?$")


def service(ctx: ct.ObjectContext) -> list[Deployment]:
    """llmaz Service: its `workloadTemplate` is a LeaderWorkerSet template (pods per replica = `size`) whose
    containers name the model by the path llmaz's model loader fills for the claimed OpenModel."""
    from kvlint.extract.pod.workloads import pod_workloads

    found = pod_workloads(ctx)
    claims = _claims(ctx.root.map("spec") or synthetic.mapping(ctx.root, {}))
    main = _find(ctx, "OpenModel", claims[0][0]) if claims else None
    mid = main.root.at("spec", "source", "modelHub", "modelID") if main is not None else None
    for d in found:
        m = LOADER_PATH.match(str(d.model.value)) if d.model is not None else None
        if m is None or d.model is None:
            continue
        named = f"{m.group(1)}/{m.group(2)}"
        where = d.model.where
        d.model = inferred(
            named, f"llmaz model-loader path of {named} ({SOURCE} modelhub.go ModelPath)", where
        )
        if isinstance(mid, Scalar) and mid.value and str(mid.value) != named and main is not None:
            d.issues.append(
                Issue(
                    UNPARSED_SETTING,
                    f"{d.label()}: the engine's model path is where llmaz's model loader would put {named}, but the "
                    f"claimed OpenModel {object_name(main.root)} is {mid.value}, which the loader puts at /workspace/models/"
                    f"models--{str(mid.value).replace('/', '--')} ({SOURCE} modelhub.go ModelPath): the path the "
                    "engine reads is not the one the loader fills",
                    where or d.where,
                    fix=f"point the model path at /workspace/models/models--{str(mid.value).replace('/', '--')}, or "
                    f"claim the OpenModel of {named}",
                    severity=Severity.WARNING,
                )
            )
    return found
