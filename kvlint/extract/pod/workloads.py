"""Pod-template workloads: every serving container in every pod template of an object, with the
pods of one group (an LWS leader and its workers, an AIBrix pod group, a Ray head and workers)
counted once. Used by the Kubernetes and Ray readers."""

from __future__ import annotations

from kvlint.deployment import Deployment, stated
from kvlint.extract.pod import aibrix_labels, pods, rbg_roles
from kvlint.extract.pod import container as ct
from kvlint.extract.pod.argv import EnvVar
from kvlint.load.tree import Mapping, Sequence


def pod_workloads(ctx: ct.ObjectContext) -> list[Deployment]:
    """Every serving container in every pod template of the object; the pods of one group (an LWS
    leader and its workers, an AIBrix pod group) that run the same engine and model count once."""
    out: list[tuple[tuple, Deployment]] = []
    for spec in rbg_roles.role_pods(ctx.root) or pods.find_pod_specs(ctx.root):
        if "roleTemplates" in spec.path:
            continue  # RoleBasedGroup templates: each role that uses one is read with its patch
        role = _role(spec.path)
        size = _group_size(ctx.root, spec.path, ctx.file)
        env = lws_env(size)
        labels = aibrix_labels.issues(ctx.root, spec.path, ctx.file)
        for c in pods.containers(spec.node):
            d = ct.build(ctx, spec.node, c, env)
            if d is None:
                continue
            if size is not None and d.pods is None:
                d.pods = size
            key = (role, d.engine_name, d.model.value if d.model else None)
            if any(k == key for k, _ in out):
                continue
            out.append((key, d))
            d.issues.extend(labels)
            labels = []  # said once per pod template
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


_GROUP_PARTS = {"leaderTemplate", "workerTemplate", "entryTemplate", "headGroupSpec", "template", "spec"}


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


def lws_env(size) -> dict[str, EnvVar]:
    """LeaderWorkerSet adds LWS_GROUP_SIZE (the group's pod count) to every container of the group
    (kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go: LwsGroupSize), so a
    command may use it (`--data-parallel-size $((LWS_GROUP_SIZE * DP_SIZE_LOCAL))`)."""
    if size is None or not str(size.note).startswith(("leaderWorkerTemplate", "workloadTemplate")):
        return {}
    return {"LWS_GROUP_SIZE": EnvVar(str(size.value), size.where)}


def _group_size(root: Mapping, path: tuple[str, ...], file: str):
    """Pods per replica from the nearest `podGroupSize` (AIBrix), leaderWorkerTemplate.size (LWS) or
    entry pod + `workerReplicas` (kthena)."""
    node = root
    found = None
    for part in path:
        if isinstance(node, Mapping):
            group = node.scalar("podGroupSize")
            if group is not None and isinstance(group.value, int):
                found = stated(group.value, group.where(file), "podGroupSize: pods per replica")
            workers = node.scalar("workerReplicas")
            if "entryTemplate" in node and workers is not None and isinstance(workers.value, int):
                # kthena ModelServing role: one entry pod and workerReplicas worker pods (volcano-sh/kthena
                # pkg/apis/workload/v1alpha1 Role)
                found = stated(
                    1 + workers.value, workers.where(file), "kthena role: 1 entry pod + workerReplicas"
                )
            # LWS; RoleBasedGroup v1alpha2 and v1alpha1; llmaz Service (its workloadTemplate is an LWS
            # LeaderWorkerTemplate)
            for key in ("leaderWorkerTemplate", "leaderWorkerPattern", "leaderWorkerSet", "workloadTemplate"):
                lwt = node.map(key)
                size = lwt.scalar("size") if lwt is not None else None
                if size is not None and isinstance(size.value, int):
                    found = stated(size.value, size.where(file), f"{key}.size: pods per replica")
        node = _step(node, part)
        if node is None:
            break
    return found
