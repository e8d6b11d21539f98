"""llm-d `llm-d-modelservice` Helm values: `modelArtifacts` + `decode` / `prefill` pod sections.

What the chart does with them (llm-d-incubation/llm-d-modelservice, charts/llm-d-modelservice,
values.yaml and templates/_helpers.tpl), applied here:
- the model is `modelArtifacts.uri`: `hf://<id>` serves <id>; `pvc://<claim>/<path>` serves
  `<modelArtifacts.mountPath>/<path>` (mountPath default /model-cache); `{{ .Values.modelArtifacts.name }}`
  in the uri is the name;
- `containers[].modelCommand`: `vllmServe` runs `vllm serve <model>`, `imageDefault` passes
  `--model <model>` to the image's entrypoint, `custom` (the default) runs the container's own
  command; the first two add `--tensor-parallel-size` (parallelism.tensor, default 1),
  `--data-parallel-size` and `--data-parallel-size-local` when above 1, then the container's args;
- GPUs per pod: the container's `resources.limits.<accelerator resource>` if written, else
  `parallelism.dataLocal x parallelism.tensor` (the chart fills it in); the resource name follows
  `accelerator.type` (nvidia: nvidia.com/gpu, amd: amd.com/gpu, google: google.com/tpu, or the values'
  `accelerator.resources` entry for the type; intel, gaudi, cpu and rebellions are not devices kvlint models);
- `multinode: true` renders a LeaderWorkerSet of `parallelism.workers` pods per replica;
- pod keys: nodeSelector, tolerations and volumes of the role; affinity only inside `extraConfig` (rendered
  into the pod spec as written); keys the chart does not read are KV005 warnings (extract/charts/llmd_keys.py);
- a role with `create: false` or `replicas: 0` renders no pods (prefill defaults to 0 replicas);
  the llm-d inference simulator image serves no model.
"""

from __future__ import annotations

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, inferred, stated
from kvlint.extract.charts import llmd_keys
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic as syn
from kvlint.findings import Issue, IssueKind
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import record

SOURCE = "llm-d-modelservice chart (templates/_helpers.tpl)"
# accelerator.type -> the resource the chart requests, unless the values' `accelerator.resources` names another
# (charts/llm-d-modelservice/templates/_helpers.tpl "acceleratorResource": `index .Values.accelerator.resources
# $acceleratorType`, else nvidia.com/gpu; the defaults of values.yaml `accelerator.resources`,
# llm-d-incubation/llm-d-modelservice@024c0f2d). A TPU pod asks for google.com/tpu chips, planned as vLLM on TPU.
RESOURCES = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu", "google": "google.com/tpu"}
NOT_GPU = {
    "intel-i915": "Intel GPU",
    "intel-xe": "Intel GPU",
    "intel-gaudi": "Intel Gaudi",
    "cpu": "CPU",
    "rebellions-atom": "Rebellions ATOM NPU",
}
DEFAULT_REPLICAS = {"decode": 1, "prefill": 0}  # chart values.yaml


def is_modelservice(root: Mapping) -> bool:
    return (
        "apiVersion" not in root
        and isinstance(root.get("modelArtifacts"), Mapping)
        and any(isinstance(root.get(r), Mapping) for r in ("decode", "prefill"))
    )


def _int(box: Mapping | None, key: str, fallback: int) -> tuple[int, Scalar | None]:
    node = box.scalar(key) if box is not None else None
    if node is not None and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value, node
    return fallback, None


def model_node(root: Mapping, path: str) -> Scalar | None:
    arts = root.map("modelArtifacts")
    uri = arts.scalar("uri") if arts is not None else None
    name = arts.scalar("name") if arts is not None else None
    if uri is None or not isinstance(uri.value, str):
        return name
    text = uri.value.replace('"', "").replace("'", "")
    if "{{" in text and name is not None and ".modelArtifacts.name" in text:
        text = text[: text.index("{{")] + str(name.value) + text[text.index("}}") + 2 :]
    scheme, _, rest = text.partition("://")
    if scheme not in llmd_keys.URI_SCHEMES:
        return None  # argsByProtocol renders no model argument (llmd_keys.uri_issues says so)
    if scheme == "hf":
        value = rest
    elif scheme.startswith("pvc"):
        mount = arts.value("mountPath") if arts is not None else None
        value = f"{mount or '/model-cache'}/{rest.split('/', 1)[1] if '/' in rest else ''}"
        if scheme == "pvc+hf":
            value = "/".join(rest.split("/")[-2:])
    else:
        return None  # oci://: the chart fails to render the model argument (llmd_keys.uri_issues)
    return Scalar(value, value, uri.tag, uri.quoted, (uri.line, uri.col, uri.end_line, uri.end_col))


def extract(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    out = _roles(root, path, base_dir, lines)
    if out:
        out[0].issues.extend(llmd_keys.top_issues(root, path))
    for d in out:
        d.issues.extend(llmd_keys.role_issues(root, d.name, path))
    return out


def _roles(root: Mapping, path: str, base_dir: str, lines: list[str]) -> list[Deployment]:
    out: list[Deployment] = []
    ctx = ct.ObjectContext(path, lines, base_dir, root, "values", "", {})
    for role in ("decode", "prefill"):
        section = root.map(role)
        if section is None or section.value("create") is False:
            continue
        replicas, rnode = _int(section, "replicas", DEFAULT_REPLICAS[role])
        if replicas == 0:
            continue
        d = _role(ctx, root, role, section)
        if d is None:
            continue
        d.extra["replicas"] = (
            stated(replicas, rnode.where(path))
            if rnode is not None
            else inferred(replicas, f"{SOURCE} default")
        )
        ct.finish(d)
        out.append(d)
    return out


def _engine_container(section: Mapping) -> Mapping | None:
    """The container the chart runs the engine in: one named as the engine packages say llm-d names it, or
    one with a modelCommand; else the first."""
    boxes = [c for c in section.seq("containers") or () if isinstance(c, Mapping)]
    for c in boxes:
        if engines.called("llm-d container", str(c.value("name") or "")) is not None or "modelCommand" in c:
            return c
    return boxes[0] if boxes else None


@record
class _Parallelism:
    """`parallelism`: the values the chart uses (filled in as it fills them) and the nodes that said them."""

    tp: int
    tp_node: Scalar | None
    dp_local: int
    dpl_node: Scalar | None
    data: int
    data_node: Scalar | None
    workers: int
    workers_node: Scalar | None


def _parallelism(section: Mapping) -> _Parallelism:
    par = section.map("parallelism")
    tp, tp_node = _int(par, "tensor", 1)
    dp_local, dpl_node = _int(par, "dataLocal", 0)
    data, data_node = _int(par, "data", 0)
    workers, workers_node = _int(par, "workers", 0)
    if not dp_local:
        dp_local = data // workers if data and workers and data % workers == 0 else (data or 1)
    if not data:
        data = dp_local * (workers or 1)
    return _Parallelism(tp, tp_node, dp_local, dpl_node, data, data_node, workers, workers_node)


def _generated_args(command_kind: str, model: Scalar | None, par: _Parallelism, anchor: Node) -> list[Node]:
    """The arguments `vllmServe` / `imageDefault` put before the container's own args."""
    generated: list[Node] = []
    if command_kind in ("vllmServe", "imageDefault") and model is not None:
        if command_kind == "imageDefault":
            generated.append(syn.scalar(model, "--model"))
        generated.append(model)
        for flag, value, node in (
            ("--tensor-parallel-size", par.tp, par.tp_node),
            ("--data-parallel-size", par.data, par.data_node),
            ("--data-parallel-size-local", par.dp_local, par.dpl_node),
        ):
            if value > 1:
                generated += [syn.scalar(node or anchor, flag), syn.scalar(node or anchor, str(value))]
    return generated


def _command_values(c: Mapping, command_kind: str, generated: list[Node], anchor: Node) -> dict[str, Node]:
    """The container's keys with the command and args the chart renders for `modelCommand`."""
    args = c.get("args")
    user_args = list(args.items) if isinstance(args, Sequence) else []
    values = dict(c.values)
    if command_kind == "vllmServe":
        values["command"] = syn.sequence(anchor, [syn.scalar(anchor, "vllm"), syn.scalar(anchor, "serve")])
    if command_kind != "custom":
        values["args"] = syn.sequence(anchor, generated + user_args)
    return values


def _role(ctx: ct.ObjectContext, root: Mapping, role: str, section: Mapping) -> Deployment | None:
    path = ctx.file
    c = _engine_container(section)
    if c is None or "llm-d-inference-sim" in str(c.value("image") or ""):
        return None
    par = _parallelism(section)
    command_kind = str(c.value("modelCommand") or "custom")
    anchor = c.scalar("modelCommand") or c
    generated = _generated_args(command_kind, model_node(root, ctx.file), par, anchor)
    values = _command_values(c, command_kind, generated, anchor)
    accel_node = root.at("accelerator", "type")
    accel = str(accel_node.value) if isinstance(accel_node, Scalar) and accel_node.value else "nvidia"
    resource = _resource_name(root, accel)
    values["resources"], auto = _resources(c, resource, par.dp_local * par.tp, anchor)  # type: ignore[assignment]
    container = syn.mapping(c, values)  # type: ignore[arg-type]
    # the pod keys the chart renders: nodeSelector, tolerations, volumes; affinity only through extraConfig
    pod_keys = ("volumes", "nodeSelector", "tolerations")
    extra = section.map("extraConfig")
    affinity = extra.get("affinity") if extra is not None else None
    pod_values: dict[str, Node | dict | None] = {k: v for k, v in section.values.items() if k in pod_keys}
    if affinity is not None:
        pod_values["affinity"] = affinity
    pod = syn.mapping(section, pod_values)
    d = ct.build(ctx, pod, container)
    if d is None:
        return _unrendered(ctx, root, role, c)
    d.name = role
    d.kind = "llm-d-modelservice"
    role_dra = section.at("accelerator", "dra")
    dra = role_dra if isinstance(role_dra, Scalar) else root.at("accelerator", "dra")
    if not (isinstance(dra, Scalar) and dra.value is True):  # DRA mode passes resources through as written
        d.issues.extend(llmd_keys.filled_mismatch(c, resource, par.dp_local * par.tp, path))
    d.issues.extend(llmd_keys.command_issues(c, path))
    uri_issues = llmd_keys.uri_issues(root, command_kind, path)
    if uri_issues:  # no model argument: the KV005 says why, no second "model is not stated"
        d.issues.extend(uri_issues)
        d.unreadable.append("model")
    if auto and d.gpus_per_pod is not None:
        d.gpus_per_pod = inferred(
            d.gpus_per_pod.value,
            f"{SOURCE}: parallelism.dataLocal {par.dp_local} x tensor {par.tp} when resources.limits leaves {resource} out",
            (par.tp_node or par.dpl_node or anchor).where(path),
        )
    d.where = root.keys[role].where(path)
    if accel in NOT_GPU:
        _not_a_gpu(d, root, role, accel, path)
    if root.value("multinode") is True:
        _multinode_pods(d, par, path)
    _labels(d, section, path)
    return d


def _resource_name(root: Mapping, accel: str) -> str | None:
    """The resource the chart fills in for `accelerator.type`: the values' own `accelerator.resources` entry, else
    the chart's default; none for the types kvlint does not plan (intel, gaudi, cpu, rebellions)."""
    if accel in NOT_GPU:
        return None
    named = root.at("accelerator", "resources", accel)
    if isinstance(named, Scalar) and isinstance(named.value, str) and named.value.strip():
        return named.value.strip()
    return RESOURCES.get(accel)


def _unrendered(ctx: ct.ObjectContext, root: Mapping, role: str, c: Mapping) -> Deployment | None:
    """A container the chart refuses to render (bad modelCommand, custom without a command): said, not dropped."""
    issues = llmd_keys.command_issues(c, ctx.file)
    if not issues:
        return None
    d = Deployment(ctx.file, root.keys[role].where(ctx.file), "llm-d-modelservice", role, ctx.base_dir)
    d.issues.extend(issues)
    d.extra["unsupported"] = stated("unrendered", issues[0].where)  # nothing to check: helm install fails
    return d


def _not_a_gpu(d: Deployment, root: Mapping, role: str, accel: str, path: str) -> None:
    where = (root.at("accelerator", "type") or root.keys[role]).where(path)
    d.accelerator = "cpu" if accel == "cpu" else "other"
    message = f"{d.label()}: runs on {NOT_GPU[accel]} (accelerator.type {accel}); kvlint models GPU memory"
    d.issues.append(Issue(NOT_CHECKABLE, message, where, kind=IssueKind.ACCELERATOR_NOT_MODELLED))
    d.extra["unsupported"] = stated(accel, where)


def _multinode_pods(d: Deployment, par: _Parallelism, path: str) -> None:
    """`multinode: true`: a LeaderWorkerSet of `parallelism.workers` pods per replica."""
    n = par.workers or 1
    d.pods = (
        stated(n, par.workers_node.where(path), "parallelism.workers: pods per replica (LeaderWorkerSet)")
        if par.workers_node is not None
        else inferred(n, f"{SOURCE}: pods per replica = data / dataLocal")
    )


def _resources(c: Mapping, resource: str | None, gpus: int, anchor: Node) -> tuple[Mapping | None, bool]:
    """The container's resources as the chart renders them, and whether the GPU count was filled in."""
    res = c.map("resources")
    limits = res.map("limits") if res is not None else None
    if resource is None or (limits is not None and resource in limits):
        return res, False
    merged = {**(limits.values if limits is not None else {}), resource: syn.scalar(anchor, gpus)}
    rest = res.values if res is not None else {}
    return syn.mapping(res or c, {**rest, "limits": syn.mapping(limits or c, merged)}), True  # type: ignore[arg-type]


def _labels(d: Deployment, section: Mapping, path: str) -> None:
    types = section.map("acceleratorTypes")
    key = types.value("labelKey") if types is not None else None
    values = types.seq("labelValues") if types is not None else None
    if key and values is not None and values.items:
        vals = [str(v.value) for v in values.items if isinstance(v, Scalar)]
        ct.apply_labels(d, [(str(key), vals, values.items[0].where(path))])
