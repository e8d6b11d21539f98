"""Helm charts that write the engine's command line from values keys of their own.

A family is recognised by its keys (never by the file name), then read as its templates render the
container: the model key becomes `--model`, the chart's argument list comes before the chart's own flags,
and what the values leave out takes the chart's default (named as the chart's default, with its source).

- OPEA `vllm` chart (opea-project/GenAIInfra@9200b371 helm-charts/common/vllm): templates/deployment.yaml
  renders `args: [extraCmdArgs..., --model LLM_MODEL_ID, --host 0.0.0.0, --port <port>, --download-dir /data]`
  on the image's entrypoint, mounts a memory-backed emptyDir of `shmSize` at /dev/shm, and takes
  `resources` as written; values.yaml defaults LLM_MODEL_ID meta-llama/Meta-Llama-3-8B-Instruct, shmSize 1Gi,
  accelDevice "" ("empty for CPU"), resources without any accelerator.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, default, stated
from kvlint.extract.pod.argv import Token, option_tokens, scalar_where
from kvlint.findings import Issue, IssueKind
from kvlint.load.tree import Mapping, Scalar, Sequence


@dataclass(frozen=True)
class Layout:
    name: str
    source: str
    keys: tuple[str, ...]  # all of these at the top of the values
    any_of: tuple[str, ...]  # and at least one of these
    model_key: str  # rendered as `--model <value>`
    args_key: str  # a list rendered before the chart's own flags
    shm_key: str  # sizeLimit of the memory-backed /dev/shm the chart always mounts
    defaults: tuple[tuple[str, str], ...]  # the chart's values.yaml defaults for the keys above
    # as a subchart of an umbrella chart: the chart's name (its values sit under that key, Helm's
    # convention) and the image it then runs by default; "" when not read as a subchart
    chart: str = ""
    chart_image: str = ""


LAYOUTS: tuple[Layout, ...] = (
    Layout(
        name="OPEA vllm chart",
        source="opea-project/GenAIInfra helm-charts/common/vllm values.yaml",
        keys=("extraCmdArgs",),
        any_of=("LLM_MODEL_ID", "accelDevice"),
        model_key="LLM_MODEL_ID",
        args_key="extraCmdArgs",
        shm_key="shmSize",
        defaults=(("LLM_MODEL_ID", "meta-llama/Meta-Llama-3-8B-Instruct"), ("shmSize", "1Gi")),
        chart="vllm",  # helm-charts/common/vllm/Chart.yaml name; OPEA ChatQnA's values say `vllm:`
        chart_image="opea/vllm:latest",
    ),
)


def subchart_sections(root: Mapping) -> list[tuple[str, Mapping, Layout, str]]:
    """Umbrella charts carry a subchart's values under the subchart's name (Helm's convention): a section
    under a layout's chart name holding its model key is that subchart's values (OPEA ChatQnA: `vllm:`)."""
    out = []
    for layout in LAYOUTS:
        section = root.map(layout.chart) if layout.chart else None
        if section is not None and section.value("enabled") is not False and layout.model_key in section:
            out.append((layout.chart, section, layout, layout.chart_image))
    return out


def layout_of(root: Mapping) -> Layout | None:
    for layout in LAYOUTS:
        if all(k in root for k in layout.keys) and any(k in root for k in layout.any_of):
            return layout
    return None


def args(layout: Layout, root: Mapping) -> Sequence | None:
    """The chart's argument list (what comes before its own flags), to add to the container."""
    seq = root.seq(layout.args_key)
    return seq if seq is not None and seq.items else None


def model_tokens(layout: Layout, root: Mapping, path: str) -> list[Token]:
    """`--model <value>` as the template writes it, when the values state the model."""
    node = root.scalar(layout.model_key)
    if isinstance(node, Scalar) and node.value:
        return option_tokens([("--model", node)], path)
    return []


def apply(d: Deployment, layout: Layout, root: Mapping, path: str) -> None:
    """What the chart adds to the container beyond the command line: its defaults, /dev/shm, no GPU."""
    defaults = dict(layout.defaults)
    if d.model is None and layout.model_key in defaults:
        d.model = default(
            defaults[layout.model_key], f"the {layout.name}'s default {layout.model_key} ({layout.source})"
        )
    shm = root.scalar(layout.shm_key)
    d.has_shm = True
    if isinstance(shm, Scalar) and shm.value:
        where = shm.where(path)
        d.shm_size = stated(str(shm.value), where, f"{layout.shm_key}: the chart's memory-backed /dev/shm")
        d.memory_quantities.append(("/dev/shm sizeLimit", str(shm.value), where))
    elif layout.shm_key in defaults:
        d.shm_size = default(
            defaults[layout.shm_key],
            f"memory-backed /dev/shm of the {layout.name}'s default {layout.shm_key} ({layout.source})",
        )
    if d.gpus_per_pod is None and d.accelerator == "gpu" and "gpus_per_pod" not in d.unreadable:
        res = root.map("resources")
        where = (res or root).where(path)
        d.accelerator = "cpu"
        d.issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: `resources` requests no GPU, so the {layout.name} renders a CPU vLLM "
                "(its default; set resources.limits nvidia.com/gpu for a GPU); kvlint models GPU memory",
                where,
                kind=IssueKind.ACCELERATOR_NOT_MODELLED,
            )
        )
        d.extra["unsupported"] = stated("cpu", where)


__all__ = ["LAYOUTS", "Layout", "apply", "args", "layout_of", "model_tokens"]


# --- charts whose engine options are a mapping of flag -> value --------------------------------
# silogen/ai-workloads workloads/llm-inference-vllm/helm (templates/_entrypoint.tpl, deployment.yaml):
# `python3 -m vllm.entrypoints.openai.api_server --<key>=<value> (a null value: a bare --<key>) ...
# --model=<model> --tensor-parallel-size=<gpus>`, resources amd.com/gpu: <gpus>, /dev/shm a
# memory-backed emptyDir of dshm.sizeLimit. `gpus` left out: its values.yaml default 1 (corpus copy,
# commit c32f131c); the default image and /dev/shm are not assumed (the benchmark chart beside it has its own).
SILOGEN_SOURCE = "silogen/ai-workloads workloads/llm-inference-vllm/helm values.yaml"
SILOGEN_GPUS = 1


# silogen/ai-workloads workloads/llm-inference-tgi/helm (templates/_entrypoint.tpl, commit 0df1e08a):
# `/tgi-entrypoint.sh --<key>=<value> … --model-id=<model> --num-shard=<gpus> --port=8080` from
# `tgi_engine_args`, the same resources and /dev/shm; its values.yaml (corpus copy) defaults gpus 1.
ENGINE_ARGS_KEYS = {  # key -> (engine, its model flag, its shard flag, the entry point the chart runs)
    "vllm_engine_args": (
        "vllm",
        "--model",
        "--tensor-parallel-size",
        "python3 -m vllm.entrypoints.openai.api_server",
    ),
    "tgi_engine_args": ("tgi", "--model-id", "--num-shard", "/tgi-entrypoint.sh"),
}


def engine_args_key(root: Mapping) -> str | None:
    """The `<engine>_engine_args` key of a silogen-style chart's values, if these are such values."""
    if "model" not in root or "kind" in root:
        return None
    return next((key for key in ENGINE_ARGS_KEYS if isinstance(root.map(key), Mapping)), None)


def is_engine_args_chart(root: Mapping) -> bool:
    return engine_args_key(root) is not None


def engine_args_tokens(root: Mapping, path: str, key: str = "vllm_engine_args") -> list[Token]:
    """`<engine>_engine_args` as the template writes it: `--key=value`, or `--key` for a null value."""
    tokens: list[Token] = []
    args = root.map(key)
    if args is None:
        return tokens
    for key, node in args.items():
        if not isinstance(node, Scalar):
            continue  # a list or map: Helm refuses it (helm_values.engine_args_problems), nothing reaches the engine
        flag = key if key.startswith("--") else f"--{key}"
        where = args.keys[key].where(path) if key in args.keys else node.where(path)
        tokens.append(Token(flag, where))
        if node.value is not None:
            tokens.append(Token(str(node.value), scalar_where(node, path)))
    return tokens


# --- keys a chart does not read ------------------------------------------------------------------
# Top-level keys each chart reads: its values.schema.json `properties`, or its values.yaml, plus the keys
# its templates read that those leave out. Helm passes any other key through silently (neither schema
# forbids additional properties), so a key outside the set is a setting the deployment never gets.
VLLM_CHART_SOURCE = (
    "vllm-project/vllm examples/online_serving/chart-helm values.schema.json and templates/deployment.yaml"
)
VLLM_CHART_KEYS = frozenset(
    [
        "image",
        "containerPort",
        "serviceName",
        "servicePort",
        "extraPorts",
        "replicaCount",
        "deploymentStrategy",
        "resources",
        "gpuModels",
        "affinity",
        "autoscaling",
        "configs",
        "secrets",
        "externalConfigs",
        "customObjects",
        "maxUnavailablePodDisruptionBudget",
        "extraInit",
        "extraContainers",
        "readinessProbe",
        "livenessProbe",
        "labels",
        "shm",
        "nodeSelector",
        "tolerations",
    ]
)
OPEA_SOURCE = (
    "opea-project/GenAIInfra helm-charts/common/vllm values.yaml and templates/{deployment,configmap}.yaml"
)
OPEA_KEYS = frozenset(
    [
        "replicaCount",
        "autoscaling",
        "accelDevice",
        "port",
        "shmSize",
        "image",
        "imagePullSecrets",
        "nameOverride",
        "fullnameOverride",
        "serviceAccount",
        "podAnnotations",
        "podSecurityContext",
        "securityContext",
        "service",
        "resources",
        "extraCmdArgs",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "nodeSelector",
        "tolerations",
        "affinity",
        "tdxEnabled",
        "LLM_MODEL_ID",
        "OMPI_MCA_btl_vader_single_copy_mechanism",
        "PT_HPU_ENABLE_LAZY_COLLECTIVES",
        "VLLM_CPU_KVCACHE_SPACE",
        "VLLM_SKIP_WARMUP",
        "VLLM_TORCH_PROFILER_DIR",
        "openvino_enabled",
        "ov_command",
        "global",
    ]
)
# keys people write for what the chart reads elsewhere
VLLM_CHART_PLACES = {
    "command": "image.command",
    "args": "image.command (the chart renders no separate args)",
    "replicas": "replicaCount",
    "model": "image.command (the chart runs image.command as written)",
    "nvidia.com/gpu": "resources.requests and resources.limits (the schema requires nvidia.com/gpu in both)",
    "env": "image.env",
}
OPEA_PLACES = {
    "args": "extraCmdArgs",
    "extraArgs": "extraCmdArgs",
    "command": "extraCmdArgs (the chart runs the image's entrypoint)",
    "model": "LLM_MODEL_ID",
    "modelId": "LLM_MODEL_ID",
    "MODEL_ID": "LLM_MODEL_ID",
    "replicas": "replicaCount",
    "shm_size": "shmSize",
}


def is_vllm_chart(root: Mapping) -> bool:
    image = root.map("image")
    return (
        image is not None
        and image.seq("command") is not None
        and ("gpuModels" in root or "extraInit" in root)
    )


def unread_keys(root: Mapping, path: str) -> list[Issue]:
    """A top-level key the chart does not read: a warning naming where the chart reads that setting."""
    from kvlint.codes import UNPARSED_SETTING
    from kvlint.findings import Severity

    if is_vllm_chart(root):
        name, keys, places, source = "vLLM Helm chart", VLLM_CHART_KEYS, VLLM_CHART_PLACES, VLLM_CHART_SOURCE
    elif layout_of(root) is not None:
        name, keys, places, source = "OPEA vllm chart", OPEA_KEYS, OPEA_PLACES, OPEA_SOURCE
    else:
        return []
    out = keys_not_read(root, path, name, keys, places, source)
    res = root.map("resources")
    if name == "vLLM Helm chart" and res is not None:
        req, lim = res.map("requests"), res.map("limits")
        if lim is not None and "nvidia.com/gpu" in lim and (req is None or "nvidia.com/gpu" not in req):
            out.append(
                Issue(
                    UNPARSED_SETTING,
                    "resources.limits asks for nvidia.com/gpu but resources.requests does not: the chart's "
                    "values.schema.json requires nvidia.com/gpu in both (helm install fails), and its GPU node "
                    f"affinity and runtimeClassName need both above 0 ({source})",
                    (req or res).where(path),
                    fix="add nvidia.com/gpu under resources.requests, equal to the limit",
                    severity=Severity.WARNING,
                )
            )
    return out


def keys_not_read(
    box: Mapping,
    path: str,
    name: str,
    keys: frozenset[str],
    places: dict[str, str],
    source: str,
    at: str = "",
) -> list[Issue]:
    """Each key of `box` outside the set the chart reads: a KV005 warning at the key naming where the chart
    reads that setting (a known-misplacement table, else the closest key the chart reads)."""
    from difflib import get_close_matches

    from kvlint.codes import UNPARSED_SETTING
    from kvlint.findings import Severity

    out: list[Issue] = []
    for key, _node in box.items():
        if key in keys:
            continue
        place = places.get(key) or next(iter(get_close_matches(key, sorted(keys), n=1, cutoff=0.8)), None)
        prose = place is not None and place.startswith(
            ("a ", "an ")
        )  # not a key of this box: said as written
        if place and at and not prose:
            place = at + place
        where = box.keys[key].where(path) if key in box.keys else box.where(path)
        said = (
            f"; it belongs in {place}"
            if prose
            else f"; the chart reads this setting from `{place}`"
            if place
            else ""
        )
        out.append(
            Issue(
                UNPARSED_SETTING,
                f"the {name} does not read `{at}{key}` ({source}): Helm ignores it" + said,
                where,
                fix=f"move it to {place}"
                if prose
                else f"move it to `{place}`"
                if place
                else "remove it, or set it where the chart reads it",
                severity=Severity.WARNING,
                stack_ignores=True,
            )
        )
    return out
