"""resolve: a Deployment -> its model architecture, its GPU, the engine settings in force, the plan.

Every value the file does not state is filled with the engine's own default, as a
`Value(origin="default", note=...)` so messages can name it. The engine, its release, the GPU as named
and the context in force are settled in `Resolved.in_force` (kvlint/deployment.py `InForce`), not
written back onto the deployment.
"""

from __future__ import annotations

from kvlint import engines, unreadable_model
from kvlint.capacity import device_limit
from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog import gpus as gpu_catalog
from kvlint.catalog import how, model_refs
from kvlint.catalog import models as model_catalog
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.declared import arch_from_declared
from kvlint.catalog.gpus import GpuSpec
from kvlint.codes import MATCHED_BY_NAME, NOT_CHECKABLE, UNKNOWN_GPU, UNKNOWN_MODEL, UNPARSED_SETTING
from kvlint.deployment import Deployment, InForce, Value, default, inferred
from kvlint.engines import flag_sets
from kvlint.engines.base import NotPlanned
from kvlint.findings import Issue, IssueKind, Location, Severity
from kvlint.record import field, record, replace


@record
class Defaults:
    """Fallbacks from the command line or the configuration file."""

    gpu: str | None = None
    gpu_source: str = ""
    fleet: tuple[str, ...] = ()  # the cluster's GPU types: capacity is checked on each (kvlint/run/fleet.py)
    fleet_source: str = ""
    engine: str | None = None
    engine_version: str | None = None
    # (engine, release) that replaces the release a workload of that engine states or defaults to: the
    # release `kvlint upgrade` evaluates it under (kvlint/upgrade/walk.py); `check` never sets it
    release: tuple[str, str] | None = None
    hub: bool = False  # --hub / `hub: true`: fetch a model no local source knows from the Hub


@record
class Resolved:
    deployment: Deployment
    model: ModelArch | None = None
    model_how: str = ""
    gpu: GpuSpec | None = None
    settings: EngineSettings | None = None
    plan: Plan | None = None
    issues: list[Issue] = field(default_factory=list)
    unknown: set[str] = field(default_factory=set)  # "model", "gpu", "gpu-memory", "engine"
    in_force: InForce = field(default_factory=InForce)  # engine, release, GPU name, settings in force


def _loc(d: Deployment, *values: Value | None) -> Location:
    for v in values:
        if v is not None and v.where is not None:
            return v.where
    return d.where


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


def _resolve_model(d: Deployment, r: Resolved, hub: bool = False) -> None:
    if d.model is None or not str(d.model.value).strip():
        _model_not_stated(d, r)
        return
    ref = str(d.model.value)
    ident = model_refs.cache_id(ref) or model_catalog.strip_ref(ref)  # a cache path names its Hub id
    res, hub_failure = _look_up_model(ref, ident, d.base_dir, hub)
    if res.kind or res.no_kv_cache or res.unpriced:
        r.issues.append(_not_capacity_checked(ref, res, _loc(d, d.model)))
        r.unknown.add("model")
    elif res.arch is not None:
        _model_found(d, r, ref, ident, res)
    elif d.architecture:
        _model_declared(d, r, ref)
    else:
        _model_unknown(d, r, ref, ident, res, hub_failure)


def _model_not_stated(d: Deployment, r: Resolved) -> None:
    """No model named: the declared architecture, else a KV003 (unless already said)."""
    if d.architecture:
        arch, _problem = arch_from_declared(d.architecture, d.name or "declared model")
        if arch is not None:
            r.model, r.model_how = arch, how.DECLARED
            return
    r.unknown.add("model")
    if "model" in d.unreadable or any(i.code == UNKNOWN_MODEL for i in d.issues):
        return  # stated but unreadable (KV005 says where), or the reader already said it is missing
    fix, kind = (
        "name the model on the engine's command line (vLLM --model, llama-server -m)",
        IssueKind.MODEL_NOT_STATED,
    )  # nothing written is wrong
    r.issues.append(
        Issue(UNKNOWN_MODEL, "model is not stated", d.where, fix=fix, severity=Severity.INFO, kind=kind)
    )


def _look_up_model(
    ref: str, ident: str, base_dir: str, hub: bool
) -> tuple[model_catalog.Resolution, model_catalog.Resolution | None]:
    """The catalog's answer, or the Hub's exact config when asked to fetch and the catalog only
    guessed (or did not know); the Hub's failure when it had none."""
    res = model_catalog.resolve(ref, base_dir)
    if hub and (res.arch is None or res.derived) and not res.no_kv_cache and model_catalog.is_hub_id(ident):
        fetched = model_catalog.from_hub(ident)  # the exact config beats a name rule's guess
        if fetched.arch is not None:
            return fetched, None
        return res, fetched
    return res, None


def _model_found(d: Deployment, r: Resolved, ref: str, ident: str, res: model_catalog.Resolution) -> None:
    """A known architecture; matched by name (KV007) when it was derived rather than catalogued."""
    r.model, r.model_how = res.arch, res.how
    if res.derived:
        r.issues.append(
            Issue(
                MATCHED_BY_NAME,
                f"model {ref!r} is not catalogued; {res.how} (rules: {res.derived})",
                _loc(d, d.model),
                details=(res.derived_from,),
                fix=f"make it known exactly: `kvlint models pull {ident}`"
                if model_catalog.is_hub_id(ident)
                else "make it known exactly: point `model` at a directory holding its config.json, or "
                "declare it under `models:` in the kvlint configuration",
            )
        )
    _apply_overrides(d, r)


def _model_declared(d: Deployment, r: Resolved, ref: str) -> None:
    """A model the catalog does not know, with its architecture declared in the file."""
    arch, problem = arch_from_declared(d.architecture, ref)
    if arch is not None:
        r.model, r.model_how = arch, f"{how.DECLARED} (model not in the catalog)"
        return
    r.issues.append(
        Issue(
            UNKNOWN_MODEL,
            f"model {ref!r} is unknown and its declared architecture is incomplete: {problem}",
            _loc(d, d.model),
        )
    )
    r.unknown.add("model")


def _model_unknown(
    d: Deployment,
    r: Resolved,
    ref: str,
    ident: str,
    res: model_catalog.Resolution,
    hub_failure: model_catalog.Resolution | None,
) -> None:
    """A KV003 saying what was tried and how to make the model known."""
    r.unknown.add("model")
    message = f"model {ref!r}: {res.how}"
    if hub_failure is not None:
        message += f"; {hub_failure.how}"
        if hub_failure.fix:
            r.issues.append(Issue(UNKNOWN_MODEL, message, _loc(d, d.model), fix=hub_failure.fix))
            return
    unreadable = None if res.read_failed else unreadable_model.issue(ref, res.how, _loc(d, d.model))
    if unreadable is not None:  # a variable, placeholder, path or volume: no model id to look up (info)
        r.issues.append(unreadable)
        return
    close = model_catalog.suggest(ref)
    hub_id = model_catalog.is_hub_id(ident)
    bare = "/" not in ident and not ident.startswith(("~", "."))  # a bare name: no organisation, not a path
    if hub_id:
        message += f"; `kvlint models pull {ident}` makes it known"
    elif bare:
        message += "; it is not a Hub id (organisation/name): `kvlint models pull ORG/NAME` with its full id makes it known"
    pull = f"`kvlint models pull {ident}`" if hub_id else "`kvlint models pull ORG/NAME`"
    fix = (
        f"did you mean {', '.join(close)}? If it is another model: {pull}"
        if close and (hub_id or bare)
        else f"did you mean {', '.join(close)}?"
        if close
        else "pull it (writes its config to .kvlint/models/), point `model` at a local config.json, "
        "or declare the model under `models:` in the kvlint configuration"
    )
    r.issues.append(Issue(UNKNOWN_MODEL, message, _loc(d, d.model), fix=fix))


def _not_capacity_checked(ref: str, res: model_catalog.Resolution, where: Location) -> Issue:
    """A model kvlint knows but whose capacity it cannot check (KV004, located at the model): not a
    text-generation checkpoint, one that keeps no KV cache, or a GGUF whose weight type is not stated."""
    if res.unpriced:
        return Issue(
            NOT_CHECKABLE,
            f"model {ref!r}: {res.how} (rules: {res.derived}); {res.unpriced}: capacity not checked",
            where,
            details=(res.derived_from,),
            fix=res.unpriced_fix
            or "name the GGUF file (e.g. `...Q4_K_M.gguf`, or `repo:Q4_K_M`), whose type prices the weights",
            severity=Severity.INFO,
        )
    return Issue(
        NOT_CHECKABLE,
        f"model {ref!r}: {res.how}; kvlint checks the KV cache and weights of text-generation models: "
        "capacity not checked",
        where,
        severity=Severity.INFO,
    )


def _apply_overrides(d: Deployment, r: Resolved) -> None:
    """Engine options that change the model (--hf-overrides, --rope-scaling …) before any check."""
    if "model_overrides" in d.unreadable:
        r.model = None  # KV005 said which override could not be read: the model the engine runs is unknown
        r.unknown.add("model")
        return
    over = d.extra.get("model_overrides")
    if over is None or r.model is None or not isinstance(over.value, dict):
        return
    from kvlint.catalog import overrides

    how = over.note or "engine overrides"
    arch, why = overrides.apply(r.model, over.value, how)
    if arch is None:
        r.issues.append(
            Issue(UNPARSED_SETTING, f"{how} could not be applied to {r.model.id}: {why}", _loc(d, over))
        )
        r.unknown.add("settings")
        return
    r.model, r.model_how = arch, f"{r.model_how}, with {how}"


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
