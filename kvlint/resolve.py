"""resolve: a Deployment -> its model architecture, its GPU, the engine settings in force, the plan.

Every value the file does not state is filled with the engine's own default, as a
`Value(origin="default", note=...)` so messages can name it. The engine, its release, the GPU as named
and the context in force are settled in `Resolved.in_force` (kvlint/deployment.py `InForce`), not
written back onto the deployment.
"""

from __future__ import annotations

from kvlint import engines
from kvlint.capacity import device_limit
from kvlint.capacity.plan import EngineSettings
from kvlint.catalog import gpus as gpu_catalog
from kvlint.catalog import models as model_catalog
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.codes import NOT_CHECKABLE, UNKNOWN_GPU, UNPARSED_SETTING
from kvlint.deployment import Deployment, InForce, Value, default, inferred
from kvlint.engines import flag_sets
from kvlint.engines.base import NotPlanned
from kvlint.findings import Issue, IssueKind, Location, Severity
from kvlint.record import replace
from kvlint.resolve_model import resolve_model as _resolve_model
from kvlint.resolved import Defaults, Resolved
from kvlint.resolved import loc as _loc

__all__ = ["Defaults", "Resolved", "engine_in_force", "engine_settings", "resolve"]


def _resolve_gpu(d: Deployment, r: Resolved, defaults: Defaults, on: Value[str] | None) -> None:
    candidates = d.gpu_candidates
    gpu = on or d.gpu
    if gpu is None and defaults.gpu and candidates is None:
        gpu = inferred(defaults.gpu, defaults.gpu_source or "GPU from --gpu / configuration default")
        r.in_force = replace(r.in_force, gpu=gpu)
    if gpu is None and "gpu" in d.unreadable:
        # the extractor's KV005 warns that the resource gets no pod / GPU as written: said once, as an info
        r.unknown.add("gpu")
        r.issues.append(
            Issue(
                UNKNOWN_GPU,
                "GPU type is not stated, and as written the resource gets no GPU: there is no card to "
                "identify until it does (the setting that decides it is reported on its own)",
                d.where,
                fix="fix that setting first; then name the GPU",
                severity=Severity.INFO,
                kind=IssueKind.GPU_NOT_STATED,
            )
        )
        return
    if gpu is None:
        r.unknown.add("gpu")
        r.issues.append(_not_stated(d, candidates))
        return
    name = str(gpu.value)
    spec = gpu_catalog.lookup(name)
    if spec is None and on is None and any(i.code == UNKNOWN_GPU for i in d.issues):
        r.unknown.add("gpu")  # the extractor already said why (a MIG profile the card does not have)
        return
    if spec is None:
        r.unknown.add("gpu")
        amb = gpu_catalog.ambiguous(name)
        if amb:
            msg = f"GPU {name!r} is ambiguous: it is sold as {', '.join(amb)}, with different memory"
            fix = f"name the exact card, e.g. {amb[0]}"
        else:
            close = gpu_catalog.suggest(name)
            msg = f"GPU {name!r} is not in the kvlint catalog"
            fix = (
                f"did you mean {', '.join(close)}?"
                if close
                else "declare it under `gpus:` in the kvlint configuration"
            )
        r.issues.append(Issue(UNKNOWN_GPU, msg, _loc(d, gpu), fix=fix))
        return
    if not spec.engine_bytes:
        r.unknown.add("gpu")
        r.issues.append(
            Issue(
                UNKNOWN_GPU,
                f"the memory of {spec.name} is not known to kvlint",
                _loc(d, gpu),
                fix="declare its memory under `gpus:` in the kvlint configuration",
            )
        )
        r.gpu = spec
        return
    r.gpu = spec


def _warns(i: Issue) -> bool:
    """The issue is a warning or an error (KV005's own default is a warning)."""
    if i.severity is not None:
        return i.severity in (Severity.WARNING, Severity.ERROR)
    return i.code == UNPARSED_SETTING


def _not_stated(d: Deployment, candidates: Value | None) -> Issue:
    if candidates is not None:
        return Issue(
            UNKNOWN_GPU,
            f"GPU type is not stated: {candidates.note} "
            f"{'give' if d.node_pools is not None else 'admits'} {len(candidates.value)} types",
            candidates.where or d.where,
            fix=str(d.gpu_candidates_fix.value)
            if d.gpu_candidates_fix is not None
            else "narrow the claim's selector to the card it runs on (productName)",
            kind=IssueKind.GPU_NOT_STATED,
        )
    bare = d.pools_without_gpu
    if bare is not None:
        return Issue(
            UNKNOWN_GPU,
            f"no GPU to run on: the node pools it can land on have none ({bare.value}), and the GPU type is not "
            "stated",
            d.where,
            fix="select a GPU node pool (nodeSelector, tolerations), or name the GPU",
            severity=Severity.INFO,  # kvlint may not see every pool (one a Helm chart or a template makes)
        )
    zero = d.gpus_per_pod is not None and d.gpus_per_pod.value == 0
    if zero and any(_warns(i) for i in d.issues):
        # the pod asks for no GPU and another finding already warns about that: the missing GPU type
        # follows from it, so it is said as an info, not a second warning about the same thing
        return Issue(
            UNKNOWN_GPU,
            "GPU type is not stated, and the pod requests no GPU: there is no card to identify until it "
            "does (the missing GPU request is reported on its own)",
            d.where,
            fix="request the GPUs first; then select the GPU with a node label, or pass --gpu NAME",
            severity=Severity.INFO,
            kind=IssueKind.GPU_NOT_STATED,
        )
    # an info: the cluster picks the GPU (run/fleet.py says where it fits, or warns when it fits on no usual card)
    return Issue(
        UNKNOWN_GPU,
        "GPU type is not stated",
        d.where,
        fix="select the GPU with a node label, or pass --gpu NAME",
        severity=Severity.INFO,
        kind=IssueKind.GPU_NOT_STATED,
    )


def engine_in_force(d: Deployment, defaults: Defaults, in_force: InForce) -> InForce:
    """The engine and release the deployment runs: stated, else the configuration's, else kvlint's default."""
    engine, version = d.engine, d.engine_version
    if engine is None:
        engine = default(
            defaults.engine or engines.DEFAULT, f"kvlint default engine ({engines.display(engines.DEFAULT)})"
        )
    if defaults.release is not None and str(engine.value) == defaults.release[0]:
        was = f"; the workload's is {version.value}" if version is not None else ""
        version = inferred(defaults.release[1], f"release {defaults.release[1]} (kvlint upgrade{was})")
    elif version is None and defaults.engine_version:
        version = inferred(defaults.engine_version, "engine version from the configuration")
    return replace(in_force, engine=engine, engine_version=version)


def engine_settings(d: Deployment, arch: ModelArch, gpu: GpuSpec | None, in_force: InForce) -> EngineSettings:
    """Every engine setting in force for the engine in force: stated, else the engine's default (named in
    the settings' `in_force`; the deployment is not written)."""
    version_text = str(in_force.engine_version.value) if in_force.engine_version else None
    return engines.get(in_force.engine_name).settings(d, arch, gpu, version_text)


def _backend_kv(d: Deployment, reason: Value[str]) -> Issue:
    """A backend kvlint does not plan (TGI's llama.cpp): its KV004, with the KV cache's size on the GPU
    when the model is known (kvlint/engines/tgi/llamacpp_kv.py); the weights and compute buffers stay
    unmodelled."""
    arch = model_catalog.resolve(str(d.model.value), d.base_dir).arch if d.model is not None else None
    priced = engines.get(d.engine_name).backend_kv(d, arch) if arch is not None else None
    kv = f"; its KV cache on the GPU(s): {priced}" if priced else ""
    return Issue(NOT_CHECKABLE, f"{d.label()}: {reason.value}{kv}: not checked", reason.where or d.where)


def _planned_accelerator(d: Deployment) -> bool:
    """A GPU workload, or a TPU one the extractor found its engine plans on (it said no KV004 for it)."""
    if d.accelerator == "tpu":
        return not any(i.kind is IssueKind.ACCELERATOR_NOT_MODELLED for i in d.issues)
    return d.accelerator == "gpu"


def resolve(d: Deployment, defaults: Defaults, on: Value[str] | None = None) -> Resolved:
    """The deployment's model, GPU, settings in force and plan; `d` is only read. `on`: a GPU to place it
    on instead of the one it names (kvlint/run/fleet.py re-resolves a deployment that names none on each
    fleet type); the extraction's issues are then the first resolve's, not repeated. Where no plan is made
    (and no fleet type may still make one), an option's "the plan leaves this out" describes no plan: the
    KV004, KV003 or KV005 that says why nothing is checked stands alone."""
    r = _resolve(d, defaults, on)
    if r.plan is None and (r.gpu is not None or r.model is None or r.unknown & {"engine", "settings"}):
        r.issues = [i for i in r.issues if i.kind is not IssueKind.OPTION_NOT_MODELLED]
    return r


def _resolve(d: Deployment, defaults: Defaults, on: Value[str] | None) -> Resolved:
    r = Resolved(d, in_force=replace(InForce.stated(d), gpu=on or d.gpu))
    if on is None:
        r.issues.extend(d.issues)
        r.issues.extend(flag_sets.issues(d, engine_in_force(d, defaults, r.in_force).engine_version))
    if d.backend_not_planned is not None:
        r.issues.append(_backend_kv(d, d.backend_not_planned))
    if not _planned_accelerator(d) or "unsupported" in d.extra:
        return r  # the extractor said what it cannot check (KV004)
    _resolve_gpu(d, r, defaults, on)
    if r.gpu is not None:  # an enforced cap on each GPU's memory (HAMi): the device the engine sees
        r.gpu, over = device_limit.limited(r.gpu, d)
        r.issues.extend([over] if over is not None else [])
        r.unknown.update({"gpu"} if over is not None else set())
    _resolve_model(d, r, defaults.hub)
    if r.model is None:
        return r
    try:
        r.in_force = engine_in_force(d, defaults, r.in_force)
        r.settings = engine_settings(d, r.model, r.gpu, r.in_force)
        if r.settings.in_force is not None:  # the settings in force, defaults named; the engine and GPU kept
            filled = r.settings.in_force
            r.in_force = replace(
                filled, engine=r.in_force.engine, engine_version=r.in_force.engine_version, gpu=r.in_force.gpu
            )
            r.issues.extend(filled.said)  # what the engine's settings found (a field it has no setting for)
    except NotPlanned as exc:
        if str(exc):
            why = f"{d.label()}: {exc}: not checked"
            r.issues.append(
                Issue(NOT_CHECKABLE, why, exc.where or d.where, kind=IssueKind.ENGINE_NOT_MODELLED)
            )
        r.unknown.add("engine")
        return r
    except ValueError as exc:
        where = getattr(exc, "where", None) or d.where
        if not _refused_there(r.issues, where):  # the release's parser refusing that value was said
            r.issues.append(Issue(UNPARSED_SETTING, f"engine settings could not be read: {exc}", where))
        return r
    if r.gpu is None or not r.gpu.engine_bytes:
        return r
    if d.unreadable and not _plans_without(d, r.settings.engine):
        r.unknown.add("settings")  # KV005 said which value; the capacity checks would use a wrong one
        return r
    r.plan = engines.get(r.settings.engine).plan(r.model, r.gpu, r.settings)
    ctx = r.in_force.max_context
    if ctx is not None and ctx.origin == "default" and r.plan.max_model_len != ctx.value:
        why = ctx.note  # the engine caps it to the KV cache (TGI)
        if "max_model_len_auto" in d.extra:  # vLLM --max-model-len auto: not the model config's length
            why = "--max-model-len auto: the largest context one request fits in the KV cache"
        r.in_force = replace(r.in_force, max_context=default(r.plan.max_model_len, why))
    return r


def _plans_without(d: Deployment, engine: str) -> bool:
    """Whether the plan stands although a value is unreadable: only the GPU count per pod (compose `count:
    all`, a count kvlint cannot read), for an engine whose parallel sizes do not follow it (KV201, which
    compares them with the count, is skipped on its own)."""
    return set(d.unreadable) == {"gpus_per_pod"} and not engines.get(engine).sizes_from_gpu_count


def _refused_there(issues: list[Issue], where: Location) -> bool:
    """A KV005 error at `where`: the pinned release refuses the value there (kvlint/engines/flag_choices.py)."""
    return any(
        i.code == UNPARSED_SETTING and i.severity is Severity.ERROR and i.where == where for i in issues
    )
