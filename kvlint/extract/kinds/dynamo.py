"""NVIDIA Dynamo `DynamoGraphDeployment` -> one Deployment per worker service.

v1alpha1 (`spec.services.<Name>`): `componentType` (frontend / worker / main / planner),
`subComponentType` (prefill / decode), `replicas`, `resources.limits.gpu` (the operator turns it
into `nvidia.com/gpu`), `device.resources` (HAMi-style device requests), `multinode.nodeCount`
(pods per replica), `sharedMemory`, `envs`, and `extraPodSpec` (a pod spec whose `mainContainer`
holds the image, command and args). v1beta1 (`spec.components[]`) carries ordinary pod templates.
The worker runs `python -m dynamo.vllm|dynamo.sglang|dynamo.trtllm` with the engine's own options
plus Dynamo's (not reported as unknown).

Operator defaults applied (ai-dynamo/dynamo, deploy/cloud/operator docs, "Operator Default Values
Injection"): every component gets an 8Gi memory-backed /dev/shm unless `sharedMemory.disabled`.
"""

from __future__ import annotations

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, default, stated
from kvlint.extract.pod import container as ct
from kvlint.extract.pod import pods
from kvlint.extract.pod import synthetic as syn
from kvlint.extract.pod.argv import EnvVar
from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Scalar, Sequence

NOT_WORKERS = {"frontend", "planner", "router", "epp"}
SHM_DEFAULT = "8Gi"
SHM_SOURCE = "Dynamo operator default: 8Gi memory-backed /dev/shm (ai-dynamo/dynamo operator docs)"


def extract(ctx: ct.ObjectContext) -> list[Deployment]:
    spec = ctx.root.map("spec")
    if spec is None:
        return []
    shared_env = _env(spec.seq("envs"), ctx.file)
    out: list[Deployment] = []
    services = spec.map("services")
    for name, svc in services.items() if services is not None else ():
        if isinstance(svc, Mapping):
            d = _service(ctx, name, services.keys[name], svc, shared_env)  # type: ignore[union-attr]
            if d is not None:
                out.append(d)
    components = spec.seq("components")
    for comp in components or ():
        if isinstance(comp, Mapping):
            out.extend(_component(ctx, comp, shared_env))
    for d in out:
        ct.finish(d)
    return out


def _env(seq: Sequence | None, path: str) -> dict[str, EnvVar]:
    box = syn.mapping(seq, {"env": seq}) if seq is not None else None
    from kvlint.extract.pod.argv import read_env

    return read_env(box, path) if box is not None else {}


def _kind_of(svc: Mapping) -> str:
    return str(svc.value("componentType") or svc.value("type") or "").lower()


def _service(
    ctx: ct.ObjectContext, name: str, key: Scalar, svc: Mapping, shared_env: dict[str, EnvVar]
) -> Deployment | None:
    if _kind_of(svc) in NOT_WORKERS:
        return None
    pod = svc.map("extraPodSpec") or syn.mapping(svc, {})
    main = pod.map("mainContainer") or syn.mapping(svc, {})
    resources = _resources(svc)
    container = syn.mapping(main, {**main.values, "resources": resources})
    device = svc.map("device")
    pod_view = syn.mapping(pod, {**pod.values, **(device.values if device is not None else {})})
    pod_view.values.pop("resources", None)
    env = {**shared_env, **_env(svc.seq("envs"), ctx.file)}
    d = ct.build(ctx, pod_view, container, env)
    if d is None:
        d = _unread_worker(ctx, svc, container)
        if d is None:
            return None
    d.name = f"{ctx.name}/{name}"
    d.where = key.where(ctx.file)
    _dynamo_facts(d, svc, ctx.file)
    return d


def _resources(svc: Mapping) -> Mapping | None:
    """`resources.limits.gpu: "4"` (and requests) as `nvidia.com/gpu`, the way the operator writes the pod;
    `device.resources` (HAMi) holds Kubernetes resource names already."""
    res = svc.map("resources")
    out: dict[str, dict] = {}
    for section in ("requests", "limits"):
        table = res.map(section) if res is not None else None
        if table is None:
            continue
        entry: dict = {}
        gpu = table.scalar("gpu")
        if gpu is not None:
            entry["nvidia.com/gpu"] = gpu
        mem = table.scalar("memory")
        if mem is not None:
            entry["memory"] = mem
        custom = table.map("custom")
        for key, node in custom.items() if custom is not None else ():
            entry[key] = node
        out[section] = entry
    device = svc.at("device", "resources")
    if isinstance(device, Mapping):
        out.setdefault("limits", {}).update(device.values)
    if not out:
        return None
    return syn.mapping(res or svc, out)  # type: ignore[arg-type]


def _unread_worker(ctx: ct.ObjectContext, svc: Mapping, container: Mapping) -> Deployment | None:
    """A GPU worker whose command kvlint cannot read: said (KV004), never passed over."""
    if not any(r.name in pods.GPU_RESOURCES for r in pods.device_resources(container, ctx.file)):
        return None
    d = Deployment(ctx.file, ctx.where, ctx.kind, ctx.name, ctx.base_dir)
    d.ignores = dict(ctx.ignores)
    where = (container.scalar("image") or svc).where(ctx.file)
    d.engine = stated("other", where, "a Dynamo worker whose command names no engine kvlint knows")
    ct.mark_unsupported(d, "other", where)
    ct.add_container_facts(d, ctx, syn.mapping(svc, {}), container)
    return d


def _dynamo_facts(d: Deployment, svc: Mapping, path: str) -> None:
    nodes = svc.at("multinode", "nodeCount")
    if isinstance(nodes, Scalar) and isinstance(nodes.value, int) and d.pods is None:
        d.pods = stated(nodes.value, nodes.where(path), "Dynamo multinode.nodeCount: pods per replica")
    replicas = svc.scalar("replicas")
    if replicas is not None and isinstance(replicas.value, int):
        d.extra["replicas"] = stated(replicas.value, replicas.where(path))
    role = svc.scalar("subComponentType")
    if role is not None and role.value:
        d.extra["role"] = stated(str(role.value), role.where(path))
    shm = svc.map("sharedMemory")
    if shm is not None and shm.value("disabled") is True:
        d.has_shm = False
        return
    size = shm.scalar("size") if shm is not None else None
    if d.has_shm:
        return  # the pod mounts its own /dev/shm
    d.has_shm = True
    if size is not None and size.value:
        d.shm_size = stated(str(size.value), size.where(path), "Dynamo sharedMemory.size")
        d.memory_quantities.append(("sharedMemory.size", str(size.value), size.where(path)))
    else:
        d.shm_size = default(SHM_DEFAULT, SHM_SOURCE)


def _component(ctx: ct.ObjectContext, comp: Mapping, shared_env: dict[str, EnvVar]) -> list[Deployment]:
    """v1beta1: `{name, type, replicas, podTemplate: {spec: <pod spec>}}`."""
    if _kind_of(comp) in NOT_WORKERS:
        return []
    pod = comp.at("podTemplate", "spec")
    if not isinstance(pod, Mapping):
        return []
    out = []
    label = comp.value("name") or "component"
    for c in pods.containers(pod):
        d = ct.build(ctx, pod, c, shared_env)
        if d is None:
            continue
        d.name = f"{ctx.name}/{label}"
        d.where = (comp.scalar("name") or comp).where(ctx.file)
        _dynamo_facts(d, comp, ctx.file)
        out.append(d)
        break
    if not out and _claims_devices(pod):
        d = Deployment(ctx.file, comp.where(ctx.file), ctx.kind, f"{ctx.name}/{label}", ctx.base_dir)
        d.issues.append(
            Issue(NOT_CHECKABLE, f"{d.label()}: a worker whose command kvlint cannot read", d.where)
        )
        d.extra["unsupported"] = stated("other", d.where)
        out.append(d)
    return out


def _claims_devices(pod: Mapping) -> bool:
    return isinstance(pod.get("resourceClaims"), Sequence) or any(
        pods.device_resources(c, "") for c in pods.containers(pod)
    )
