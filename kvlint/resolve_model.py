"""resolve's model half: the architecture a deployment's model reference names (the catalog, the Hub, the
file's declared facts, a match by name), said once when it cannot be found or read, and the file's overrides of
its config applied (kvlint/resolve.py calls `resolve_model`)."""

from __future__ import annotations

from kvlint import unreadable_model
from kvlint.catalog import how, model_refs
from kvlint.catalog import models as model_catalog
from kvlint.catalog.declared import arch_from_declared
from kvlint.codes import MATCHED_BY_NAME, NOT_CHECKABLE, UNKNOWN_MODEL, UNPARSED_SETTING
from kvlint.deployment import Deployment
from kvlint.findings import Issue, IssueKind, Location, Severity
from kvlint.resolved import Resolved
from kvlint.resolved import loc as _loc


def resolve_model(d: Deployment, r: Resolved, hub: bool = False) -> None:
    """The model architecture `d` names into `r` (model, model_how), or the one issue that says why none."""
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
