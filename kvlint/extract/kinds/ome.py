"""OME (ome.io, sgl-project/ome@17b77ed) InferenceService, ClusterServingRuntime / ServingRuntime and
ClusterBaseModel / BaseModel, read as OME's controller builds the pods:

- a runtime's `engineConfig` and `decoderConfig` (prefill/decode split) each describe one component: a
  pod (`volumes`, `tolerations`, `affinity`, `nodeSelector`, …) with one container, `runner`; or, for
  multi-node serving, a `leader` pod and `worker.size` worker pods run as one LeaderWorkerSet group of
  size + 1 pods (reconcilers/lws/lws_reconciler.go), each with its own `runner`;
- OME sets PARALLELISM_SIZE = the leader's GPUs x (1 + worker size) in a multi-node component
  (components/engine.go setParallelismEnvVarForEngine) and MODEL_PATH = the base model's
  `storage.path` (components/base.go UpdateEnvVariables): runtime commands read both;
- an InferenceService names its model (`model.name`, a ClusterBaseModel unless `model.kind` says
  BaseModel) and its runtime (`runtime.name`, else the controller picks one from the model's
  architecture and size); only the components the InferenceService lists run, each the runtime's
  merged with the InferenceService's (utils/merging.go MergeEngineSpec / MergeDecoderSpec: strategic
  merge, the InferenceService winning);
- the model is the base model's `storage.storageUri` (`hf://org/name` is that Hub id).
The runtime, the base model (same file or a YAML file beside it) are merged; what is not found is said
(KV004), never assumed.
"""

from __future__ import annotations

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, Value, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import synthetic
from kvlint.extract.pod.argv import EnvVar, FileLines
from kvlint.findings import Issue, IssueKind
from kvlint.load.nearby import Found, object_name
from kvlint.load.tree import Mapping, Node, Scalar
from kvlint.record import replace

GROUP = "ome.io/"
RUNTIME_KINDS = ("ClusterServingRuntime", "ServingRuntime")
MODEL_KINDS = ("ClusterBaseModel", "BaseModel")
SOURCE = "sgl-project/ome@17b77ed"
COMPONENTS = (("engineConfig", "engine"), ("decoderConfig", "decoder"))
POD_FIELDS = ("nodeSelector", "affinity", "tolerations", "volumes", "schedulerName", "resourceClaims")


def is_ome(root: Mapping) -> bool:
    return str(root.value("apiVersion") or "").startswith(GROUP)


def runtime(ctx: ct.ObjectContext) -> list[Deployment]:
    """A runtime on its own: each component read, the model being each InferenceService's base model."""
    spec = ctx.root.map("spec")
    if spec is None or _used_here(ctx):
        return []
    out: list[Deployment] = []
    for key, label in COMPONENTS:
        comp = spec.map(key)
        if comp is None:
            continue
        d = _component(ctx, spec, comp, None, label, {"MODEL_PATH": EnvVar(None, None)})
        if d is None:
            continue
        d.issues = [i for i in d.issues if i.code != NOT_CHECKABLE and "MODEL_PATH" not in i.unset]
        d.issues.append(
            Issue(
                NOT_CHECKABLE,
                f"{d.label()}: an OME serving runtime template; the model ($(MODEL_PATH), the base model's "
                f"storage path) comes from each InferenceService that selects it ({SOURCE} components/base.go)",
                d.where,
                kind=IssueKind.DEFINED_ELSEWHERE,
            )
        )
        d.extra["unsupported"] = stated("runtime-template", d.where)
        out.append(d)
    return out


def isvc(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    rt, rt_why = _runtime_of(ctx, spec)
    base, base_why = _base_model(ctx, spec)
    if rt is None:
        d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
        d.ignores = dict(ctx.ignores)
        return [ct.not_checked(d, ctx.where, "OME runtime", rt_why)]
    rspec = rt.root.map("spec")
    if rspec is None:
        return []
    if not rt.same_file:
        rspec = synthetic.in_file(rspec, rt.file)  # type: ignore[assignment]
        if ctx.nearby is not None:
            ctx = replace(ctx, lines=FileLines(ctx.lines, {rt.file: ctx.nearby.lines_of(rt.file)}))
    env, model = _model_env(base)
    out: list[Deployment] = []
    for key, label in COMPONENTS:
        mine = spec.map(label)
        theirs = rspec.map(key)
        if mine is None or theirs is None:
            continue  # OME runs a component only when the InferenceService lists it (MergeEngineSpec)
        merged = synthetic.strategic_merge(theirs, mine)
        assert isinstance(merged, Mapping)
        found = _component(ctx, rspec, merged, mine, label, env)
        if found is None:
            continue
        d = found
        d.extra["runtime"] = stated(f"{rt.root.value('kind')} {object_name(rt.root)} ({rt.file})", ctx.where)
        if model is not None and (d.model is None or str(d.model.value) == env["MODEL_PATH"].value):
            d.model = model
        if base_why:
            d.issues = [i for i in d.issues if "MODEL_PATH" not in i.unset]
            d.issues.append(
                Issue(
                    NOT_CHECKABLE,
                    f"{d.label()}: {base_why}: not checked",
                    ctx.where,
                    kind=IssueKind.DEFINED_ELSEWHERE,
                )
            )
            d.extra["unsupported"] = stated("base-model", ctx.where)
        out.append(d)
    return out


# --- one component (engine or decoder) --------------------------------------------------------------


def _component(
    ctx: ct.ObjectContext,
    spec: Mapping,
    comp: Mapping,
    mine: Mapping | None,
    label: str,
    env: dict[str, EnvVar],
) -> Deployment | None:
    leader, worker = comp.map("leader"), comp.map("worker")
    pod_src = leader if leader is not None else comp
    runner = pod_src.map("runner")
    if runner is None:
        return None
    env = dict(env)
    size = None
    if leader is not None and worker is not None:
        size_node = worker.scalar("size")
        if size_node is not None and isinstance(size_node.value, int):
            size = stated(size_node.value + 1, size_node.where(ctx.file), "OME worker.size + 1 leader pod")
            gpus = _gpus(runner)
            group = EnvVar(str(size.value), size.where)
            env["LWS_GROUP_SIZE"] = group
            if gpus:
                env["PARALLELISM_SIZE"] = EnvVar(
                    str(gpus * size.value), size.where
                )  # leader GPUs x (1 + workers)
    pod = _pod(spec, comp, pod_src, runner)
    sub = replace(ctx, name=f"{ctx.name}/{label}")
    d = ct.build(sub, pod, runner, env)
    if d is None:
        return None
    if size is not None:
        d.pods = size
    return d


def _pod(spec: Mapping, comp: Mapping, pod_src: Mapping, runner: Mapping) -> Mapping:
    """The runtime's pod fields, the component's over them, the leader's over those (strategic merge)."""
    layers = [spec, comp] if pod_src is comp else [spec, comp, pod_src]
    pod: Node | None = None
    for layer in layers:
        part = synthetic.mapping(layer, {k: layer.get(k) for k in POD_FIELDS})
        pod = synthetic.strategic_merge(pod, part)
    assert isinstance(pod, Mapping)
    pod.values["containers"] = synthetic.sequence(runner, [runner])
    pod.keys["containers"] = synthetic.scalar(runner, "containers")
    return pod


def _gpus(runner: Mapping) -> int:
    from kvlint.extract.pod import pods

    found = [r for r in pods.device_resources(runner, "") if pods.is_gpu(r.name) and r.count]
    return found[0].count or 0 if found else 0


# --- the runtime and the base model -------------------------------------------------------------------


def _runtime_of(ctx: ct.ObjectContext, spec: Mapping) -> tuple[Found | None, str]:
    name = spec.at("runtime", "name")
    if not isinstance(name, Scalar) or not name.value:
        return None, (
            "OME InferenceService without runtime.name: the OME controller picks the runtime (engine, "
            f"parallelism, GPUs) from the base model's architecture and size ({SOURCE} runtime selection)"
        )
    hits = _named(ctx, RUNTIME_KINDS, str(name.value))
    if not hits:
        return None, (
            f"its OME runtime {name.value} is not in this file or a YAML file beside it: the engine, its "
            "arguments and the GPUs are the runtime's"
        )
    hits.sort(key=lambda f: f.root.value("kind") != "ServingRuntime")  # a namespace runtime first
    return hits[0], ""


def _base_model(ctx: ct.ObjectContext, spec: Mapping) -> tuple[Found | None, str]:
    name = spec.at("model", "name")
    if not isinstance(name, Scalar) or not name.value:
        return None, "OME InferenceService without model.name: the model is unknown"
    kind = spec.at("model", "kind")
    kinds = (
        (str(kind.value),)
        if isinstance(kind, Scalar) and kind.value in MODEL_KINDS
        else ("ClusterBaseModel",)
    )
    hits = _named(ctx, kinds, str(name.value))
    if not hits:
        return None, (
            f"its model is the {kinds[0]} {name.value}, not in this file or a YAML file beside it: the model "
            "(its storage URI and path) is unknown"
        )
    return hits[0], ""


def _model_env(base: Found | None) -> tuple[dict[str, EnvVar], Value[str] | None]:
    """MODEL_PATH as OME sets it, and the model the base model names (an hf:// storage URI's Hub id)."""
    if base is None:
        return {"MODEL_PATH": EnvVar(None, None)}, None
    storage = base.root.at("spec", "storage")
    node = (
        synthetic.in_file(storage, base.file)
        if isinstance(storage, Mapping) and not base.same_file
        else storage
    )
    path = node.scalar("path") if isinstance(node, Mapping) else None
    uri = node.scalar("storageUri") if isinstance(node, Mapping) else None
    env = {"MODEL_PATH": EnvVar(str(path.value) if path else None, path.where(base.file) if path else None)}
    model = None
    if uri is not None and str(uri.value).startswith("hf://"):
        model = stated(
            str(uri.value)[5:], uri.where(base.file), f"{base.root.value('kind')} storage.storageUri"
        )
    return env, model


def _named(ctx: ct.ObjectContext, kinds: tuple[str, ...], name: str) -> list[Found]:
    found = ctx.nearby.named(kinds, name) if ctx.nearby is not None else []
    return [f for f in found if is_ome(f.root)]


def _used_here(ctx: ct.ObjectContext) -> bool:
    """An OME InferenceService of this file runs on this runtime: it is read as part of it, not again."""
    if ctx.nearby is None:
        return False
    for f in ctx.nearby.here(("InferenceService",)):
        name = f.root.at("spec", "runtime", "name")
        if is_ome(f.root) and isinstance(name, Scalar) and name.value == object_name(ctx.root):
            return True
    return False
