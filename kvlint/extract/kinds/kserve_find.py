"""Which runtime a KServe InferenceService runs on (kserve/kserve pkg/controller/v1beta1/inferenceservice/utils/
utils.go): the one `predictor.model.runtime` names (a namespace ServingRuntime before a ClusterServingRuntime), else
the first enabled runtime whose `supportedModelFormats` lists the model format (and version) with
`autoSelect: true`, highest `priority` first, namespaced before cluster ones; a multi-node predictor
(`workerSpec`) takes only a multi-node runtime. Runtimes are looked for in this file and the YAML files beside
it; one named is also looked for in the folders beside this file's (load/nearby.py named_beside).
"""

from __future__ import annotations

from kvlint.extract.kinds import ome
from kvlint.extract.pod import container as ct
from kvlint.load.nearby import Found, object_name
from kvlint.load.tree import Mapping

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")


def runtime(ctx: ct.ObjectContext, predictor: Mapping, model: Mapping) -> tuple[Found | None, str]:
    """The runtime found (None if not) and how it is named in messages."""
    name = model.scalar("runtime")
    candidates = ctx.nearby.objects(RUNTIME_KINDS) if ctx.nearby is not None else []
    candidates = [f for f in candidates if not ome.is_ome(f.root)]  # OME (ome.io) reuses the kind names
    if name is not None and name.value:
        wanted = str(name.value)
        named = [f for f in candidates if object_name(f.root) == wanted]
        if not named and ctx.nearby is not None:  # a runtimes/ folder beside this one (load/nearby.py)
            named = [f for f in ctx.nearby.named_beside(RUNTIME_KINDS, wanted) if not ome.is_ome(f.root)]
        named.sort(key=lambda f: f.root.value("kind") != "ServingRuntime")  # namespace runtimes first
        if named:
            return named[0], _shown(named[0])
        return None, f"runtime {wanted}"
    fmt = model.map("modelFormat")
    fmt_name = fmt.value("name") if fmt is not None else None
    if not isinstance(fmt_name, str):
        return None, "no runtime and no model format"
    version = fmt.value("version") if fmt is not None else None
    multinode = predictor.get("workerSpec") is not None
    able = [(f, p) for f in candidates if (p := _supports(f.root, fmt_name, version, multinode)) is not False]
    # namespaced before cluster runtimes; within each, a stated priority first, highest first
    able.sort(key=lambda fp: (fp[0].root.value("kind") != "ServingRuntime", fp[1] is None, -(fp[1] or 0)))
    if able:
        return able[0][0], _shown(able[0][0])
    return None, f"a runtime for model format {fmt_name}"


def _shown(f: Found) -> str:
    where = "this file" if f.same_file else f.file
    return f"{f.root.value('kind')} {object_name(f.root)} ({where})"


def _supports(root: Mapping, fmt: str, version, multinode: bool) -> int | None | bool:
    """False when the runtime cannot take the model; else its priority for the format (None: unstated)."""
    spec = root.map("spec")
    if spec is None or spec.value("disabled") is True or (spec.get("workerSpec") is not None) != multinode:
        return False
    if spec.value("multiModel") is True:
        return False
    for entry in spec.seq("supportedModelFormats") or ():
        if (
            not isinstance(entry, Mapping)
            or entry.value("name") != fmt
            or entry.value("autoSelect") is not True
        ):
            continue
        if version is not None and str(entry.value("version")) != str(version):
            continue
        priority = entry.value("priority")
        return priority if isinstance(priority, int) and not isinstance(priority, bool) else None
    return False
