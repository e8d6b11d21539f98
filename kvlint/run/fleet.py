"""A deployment that names no GPU: check it on the cluster's fleet, or on the usual cloud cards.

With `fleet: [L4, A100-80GB, H100]` in the configuration, every capacity rule runs once per type
(the deployment as extracted re-resolved on that card, engine defaults filled for it) and the findings are
merged: a finding that holds on every type keeps its severity; one that holds on some types only
says on which, and an error there becomes a warning (the pod may land on a type where it fits).
KV002 (info) says on which types the deployment fits and on which it does not.

With no fleet and no `gpu`, the GPU-independent rules run as always, and KV002 says on which of
the usual cloud cards (catalog `common_cloud_gpus`) the deployment fits at its GPU count: an info
naming the smallest, or an error when the weights exceed even the largest of them.
"""

from __future__ import annotations

from collections.abc import Callable

from kvlint import engines
from kvlint.catalog import gpus as catalog
from kvlint.catalog.gpus import GpuSpec
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import inferred
from kvlint.findings import Finding, Issue, IssueKind, Severity
from kvlint.resolve import Resolved, resolve
from kvlint.units import gib

RunRules = Callable[..., list[Finding]]
NOT_STATED = "GPU type is not stated"
CAPACITY_NEEDS = ("gpu", "plan")


def findings(path: str, r: Resolved, settings, rules, run_rules: RunRules) -> list[Finding]:
    """The rules' findings for one resolved deployment, fleet-aware."""
    base = _not_stated(r)
    if base is None or r.in_force.gpu is not None or r.model is None:
        return run_rules(path, r, settings, rules)
    candidates = r.deployment.gpu_candidates
    if candidates is not None:  # a DRA selector that admits several types: each is checked
        return _on_fleet(path, r, base, settings, rules, run_rules, tuple(candidates.value), candidates.note)
    if settings.defaults.fleet:
        source = settings.defaults.fleet_source or "configuration"
        return _on_fleet(path, r, base, settings, rules, run_rules, settings.defaults.fleet, source)
    _common_fit(r, base, settings.defaults)
    return run_rules(path, r, settings, rules)


def _not_stated(r: Resolved) -> Issue | None:
    for issue in r.issues:
        if issue.kind is IssueKind.GPU_NOT_STATED:
            return issue
    return None


def _sub(r: Resolved, name: str, note: str, defaults) -> Resolved:
    from kvlint.record import replace

    return resolve(r.deployment, replace(defaults, fleet=(), gpu=None), on=inferred(name, note))


def _fits(sub: Resolved) -> bool | None:
    """Weights fit and one request of the context length fits the KV pool; None when not planned."""
    p = sub.plan
    if p is None:
        return None
    return p.weights_per_gpu <= p.weights_limit and p.max_concurrency >= 1


def _spread(r: Resolved, p) -> float:
    """Weights per GPU if spread evenly over every GPU of the replica (the most favourable placement)."""
    d, s = r.deployment, r.settings
    n = int(d.gpus.value) if d.gpus is not None else ((s.tp * s.pp) if s is not None else 1)
    return p.weights_total / max(1, n)


def _count(r: Resolved) -> str:
    d, s = r.deployment, r.settings
    if d.gpus is not None:
        n = int(d.gpus.value)
    else:
        n = (s.tp * s.pp) if s is not None else 1
    return f"{n} GPU{'s' if n != 1 else ''}"


def _placement_guessed(r: Resolved) -> bool:
    """Expert or data parallelism where kvlint does not model the weight placement (vLLM's split of MoE
    experts over TP x DP is modelled: capacity/weights.py), or a setting it could not read (a key the stack
    itself ignores is no guess: the deployed configuration simply lacks it)."""
    d = r.deployment
    modelled = r.settings is not None and engines.get(r.settings.engine).models_expert_placement
    return bool(
        (not modelled and d.expert_parallel is not None and d.expert_parallel.value)
        or (not modelled and d.data_parallel is not None and int(d.data_parallel.value) > 1)
        or any(i.code == UNPARSED_SETTING and not i.stack_ignores for i in r.issues)
    )


def _usual_cards(r: Resolved) -> list[GpuSpec]:
    """The usual cloud GPUs of the deployment's vendor (amd.com/gpu: AMD), smallest first."""
    d = r.deployment
    table = catalog.table("common_cloud_gpus")
    vendor = "amd" if d.gpus_per_pod is not None and d.gpu_resource == "amd.com/gpu" else "nvidia"
    ids = table.get("amd_ids" if vendor == "amd" else "ids", [])
    cards: list[GpuSpec] = [s for s in (catalog.by_id(i) for i in ids) if s is not None and s.engine_bytes]
    cards.sort(key=lambda s: s.engine_bytes or 0)
    return cards


def _common_fit(r: Resolved, base: Issue, defaults) -> None:
    from kvlint.record import replace

    if _placement_guessed(r):
        return  # expert / data parallel weight placement or an unread setting: no verdict on a guess
    cards = _usual_cards(r)
    if not cards:
        return
    results = [
        (spec, _sub(r, spec.id, f"common cloud GPU {spec.name} (tried by kvlint)", defaults))
        for spec in cards
    ]
    planned = [(spec, sub) for spec, sub in results if sub.plan is not None]
    if not planned:
        return
    count = _count(r)
    fit = next((spec for spec, sub in planned if _fits(sub)), None)
    largest, big = planned[-1]
    big_plan = big.plan
    assert big_plan is not None  # `planned` keeps only cards with a plan
    idx = r.issues.index(base)
    if fit is not None:
        r.issues[idx] = replace(
            base,
            message=f"{NOT_STATED}: at {count} it fits on a {fit.name} or larger (the smallest of the usual cloud GPUs it fits)",
            details=(*base.details, "tried: " + ", ".join(s.name for s in cards)),
            severity=Severity.INFO,
        )
    elif big_plan.weights_per_gpu > big_plan.weights_limit and _spread(r, big_plan) <= big_plan.weights_limit:
        r.issues[idx] = replace(
            base,
            message=f"{NOT_STATED}, and with the parallelism kvlint read the weights ({gib(big_plan.weights_per_gpu)} "
            f"per GPU) exceed what even a {largest.name} gives the engine ({gib(big_plan.weights_limit)}); spread over "
            f"all {count} (tensor or expert parallelism) they would fit",
            fix="check the tensor / expert parallelism, or name the GPU",
            severity=Severity.WARNING,  # the parallelism the file states: the author's to check
        )
    elif big_plan.weights_per_gpu > big_plan.weights_limit:
        r.issues[idx] = replace(
            base,
            message=f"{NOT_STATED}, and at {count} the weights ({gib(big_plan.weights_per_gpu)} per GPU, even "
            f"spread over all of them) exceed "
            f"what even a {largest.name} gives the engine ({gib(big_plan.weights_limit)}): it fits on none of the usual cloud GPUs",
            details=(*base.details, *big_plan.lines),
            fix="more GPUs with tensor parallelism, or a quantized checkpoint",
            severity=Severity.ERROR,
        )
    else:
        r.issues[idx] = replace(
            base,
            message=f"{NOT_STATED}: at {count} the weights load on a {largest.name}, but not one request of "
            f"{big_plan.max_model_len:,} tokens fits its KV cache (nor on any smaller usual cloud GPU)",
            fix="name the GPU (--gpu or a node label), shorten the context, or use more GPUs",
            severity=Severity.WARNING,  # the context the file asks for fits no usual card
        )


def _on_fleet(
    path: str,
    r: Resolved,
    base: Issue,
    settings,
    rules,
    run_rules: RunRules,
    fleet: tuple[str, ...],
    source: str,
) -> list[Finding]:
    from kvlint.record import replace

    claim = r.deployment.gpu_candidates is not None
    pooled = r.deployment.node_pools is not None  # the candidates are the GPUs of the pools it lands on
    general = [rule for rule in rules if not any(n in CAPACITY_NEEDS for n in rule.needs.facts)]
    capacity = [rule for rule in rules if any(n in CAPACITY_NEEDS for n in rule.needs.facts)]
    per_type: list[tuple[str, Resolved, list[Finding]]] = []
    for name in fleet:
        sub = _sub(
            r, name, f"{'one of the GPUs' if claim else 'fleet GPU'} {name} ({source})", settings.defaults
        )
        spec = sub.gpu
        label = spec.name if spec is not None else name
        per_type.append((label, sub, run_rules(path, sub, settings, capacity)))
    fits = [label for label, sub, found in per_type if sub.plan is not None and not _errors(found)]
    head = (
        f"{source} {'give' if pooled else 'admits'} {len(fleet)} GPU types: checked on each"
        if claim
        else f"{NOT_STATED}: checked on each GPU of the fleet ({source})"
    )
    summary = head + _outcomes(per_type, fits)
    r.issues[r.issues.index(base)] = replace(base, message=summary, severity=Severity.INFO)
    out = run_rules(path, r, settings, general)
    every = "GPU its node pools give" if pooled else "GPU the claim admits" if claim else "fleet GPU"
    out.extend(_merge(per_type, fits, every))
    return out


def _outcomes(per_type: list[tuple[str, Resolved, list[Finding]]], fits: list[str]) -> str:
    """The fleet summary's tail: where it fits, where not, and where it was not checked (and why)."""
    fails = [label for label, sub, found in per_type if sub.plan is not None and _errors(found)]
    unplanned = [label for label, sub, _ in per_type if sub.plan is None and _not_planned(sub) is None]
    reasons: dict[str, list[str]] = {}
    for label, sub, _ in per_type:
        if sub.plan is None and (why := _not_planned(sub)):
            reasons.setdefault(why, []).append(label)
    refused = [f"{', '.join(labels)}: {why}" for why, labels in reasons.items()]
    out = ""
    if fits:
        out += f"; fits on {', '.join(fits)}"
    if fails:
        out += f"; does not fit on {', '.join(fails)}"
    if unplanned:
        out += f"; not checked on {', '.join(unplanned)} (unknown GPU or memory)"
    if refused:
        out += f"; not checked on {'; '.join(refused)}"
    return out


def _not_planned(sub: Resolved) -> str | None:
    """Why the engine settles nothing on this GPU (NIM: no profile it admits), as resolve said it; None."""
    for i in sub.issues:
        if i.kind is IssueKind.ENGINE_NOT_MODELLED and "engine" in sub.unknown:
            return i.message.split(": ", 1)[-1].removesuffix(": not checked")
    return None


def _errors(found: list[Finding]) -> bool:
    return any(f.severity >= Severity.ERROR for f in found)


def _merge(per_type: list[tuple[str, Resolved, list[Finding]]], fits: list[str], every: str) -> list[Finding]:
    """One finding per rule: on every type it keeps its severity; on some, it names them and an
    error becomes a warning."""
    from kvlint.record import replace

    labels = [label for label, sub, _ in per_type if sub.plan is not None]
    by_rule: dict[str, list[tuple[str, Finding]]] = {}
    for label, _sub_r, found in per_type:
        for f in found:
            by_rule.setdefault(f.rule, []).append((label, f))
    out: list[Finding] = []
    for hits in by_rule.values():
        where = [label for label, _ in hits]
        # the finding of the largest card that still fails: the best case, when it fails everywhere
        label, f = hits[-1]
        if set(where) >= set(labels):
            message = f"on every {every} ({', '.join(where)}); on {label}: {f.message}"
            severity = f.severity
        else:
            ok = [x for x in fits if x not in where]
            also = f" (not on {', '.join(ok)})" if ok else ""
            message = f"on {', '.join(where)}{also}; on {label}: {f.message}"
            severity = min(f.severity, Severity.WARNING)
        details = (*f.details, *(f"on {lab}: {g.message}" for lab, g in hits[:-1]))
        out.append(replace(f, message=message, severity=severity, details=details))
    return out
