"""The pods of a RoleBasedGroup's roles (sgl-project/rbg) as its controller builds them: a template with
patches over it, strategic-merged.

- A role's template is its own `template`, or the `spec.roleTemplates` entry its `templateRef.name` names
  with the patch over it: `templateRef.patch` (v1alpha2) or the role's `templatePatch` (KEP-8, "Introduce
  template reference to reduce YAML duplication").
- v1alpha1: a role with `leaderWorkerSet` runs `size` pods per instance, the leader being the template with
  `patchLeaderTemplate` over it and each worker the template with `patchWorkerTemplate` (the LWS reconciler's
  constructLWSApplyConfiguration: `patchPodTemplate(role.Template, role.LeaderWorkerSet.PatchLeaderTemplate)`).
- v1alpha2: the same under `leaderWorkerPattern` (`template` or `templateRef`, `leaderTemplatePatch`,
  `workerTemplatePatch`), and `standalonePattern` for a role of single pods (the v1alpha1 -> v1alpha2
  conversion maps PatchLeaderTemplate to LeaderTemplatePatch and PatchWorkerTemplate to WorkerTemplatePatch).

The patch alone is not a pod: the leader's command with the template's image and GPUs is. Each pod is given
at the path of the role, so the readers of pod templates (workloads.py) group a role's leader and workers
and find its `size`.
"""

from __future__ import annotations

from kvlint.extract.pod import synthetic
from kvlint.extract.pod.pods import PodSpec, find_pod_specs
from kvlint.load.tree import Mapping, Node

KIND = "RoleBasedGroup"
PATTERNS = (  # where a role keeps its template, and the patches of its leader and worker pods
    ("leaderWorkerPattern", "leaderTemplatePatch", "workerTemplatePatch"),  # v1alpha2
    ("standalonePattern", "", ""),  # v1alpha2
)
V1ALPHA1_LWS = ("leaderWorkerSet", "patchLeaderTemplate", "patchWorkerTemplate")


def role_pods(root: Node) -> list[PodSpec] | None:
    """The pods of every role of a RoleBasedGroup, patches applied; None for any other object."""
    if not isinstance(root, Mapping) or root.value("kind") != KIND:
        return None
    roles = root.at("spec", "roles")
    shared = _role_templates(root)
    out: list[PodSpec] = []
    for i, role in enumerate(getattr(roles, "items", ())):
        if isinstance(role, Mapping):
            path = ("spec", "roles", str(i))
            # a role in a shape not read here keeps the pod templates found in it, as any object's are
            out.extend(
                _pods(role, path, shared) or [PodSpec(p.node, (*path, *p.path)) for p in find_pod_specs(role)]
            )
    return out


def _role_templates(root: Mapping) -> dict[str, Node]:
    out: dict[str, Node] = {}
    for entry in getattr(root.at("spec", "roleTemplates"), "items", ()):
        if (
            isinstance(entry, Mapping)
            and isinstance(entry.value("name"), str)
            and entry.get("template") is not None
        ):
            out[str(entry.value("name"))] = entry.get("template")  # type: ignore[assignment]
    return out


def _pods(role: Mapping, path: tuple[str, ...], shared: dict[str, Node]) -> list[PodSpec]:
    for key, leader_key, worker_key in PATTERNS:
        holder = role.map(key)
        if holder is not None:
            return _patched(_template(holder, role, shared), holder, leader_key, worker_key, (*path, key))
    lws = role.map(V1ALPHA1_LWS[0])
    base = _template(role, role, shared)
    if lws is not None:
        return _patched(base, lws, V1ALPHA1_LWS[1], V1ALPHA1_LWS[2], (*path, V1ALPHA1_LWS[0]))
    return _spec(base, (*path, "template"))


def _template(holder: Mapping, role: Mapping, shared: dict[str, Node]) -> Node | None:
    """The holder's own template, else the roleTemplates entry its templateRef names under its templatePatch."""
    own = holder.get("template")
    if own is not None:
        return own
    ref = holder.map("templateRef") or role.map("templateRef")
    name = ref.value("name") if ref is not None else None
    base = shared.get(str(name)) if isinstance(name, str) else None
    patch = (
        (ref.get("patch") if ref is not None else None)
        or holder.get("templatePatch")
        or role.get("templatePatch")
    )
    return synthetic.strategic_merge(base, patch) if base is not None else None


def _patched(
    base: Node | None, holder: Mapping, leader_key: str, worker_key: str, path: tuple[str, ...]
) -> list[PodSpec]:
    if base is None:
        return []
    patches = [(k, holder.get(k)) for k in (leader_key, worker_key) if k and holder.get(k) is not None]
    if not patches:
        return _spec(base, (*path, "template"))
    out: list[PodSpec] = []
    for name, patch in patches:
        out.extend(
            _spec(
                synthetic.strategic_merge(base, patch),
                (*path, "leaderTemplate" if name == leader_key else "workerTemplate"),
            )
        )
    return out


def _spec(template: Node | None, path: tuple[str, ...]) -> list[PodSpec]:
    spec = template.map("spec") if isinstance(template, Mapping) else None
    if spec is None or spec.seq("containers") is None:
        return []
    return [PodSpec(spec, (*path, "spec"))]
