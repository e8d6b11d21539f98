"""`kvlint plan`: the course's capacity planner, with the engine's own accounting (the command).

Weights, KV per token, the KV pool, concurrency at several context lengths, the longest context
for N sequences, and the smallest GPU count that fits — as text with a memory bar, or JSON. With
several GPU types (`--gpu L4 --gpu H100`, `--fleet L4,A100-80GB,H100`, MIG profiles such as
`a100-80gb:3g.40gb` among them) the plan is made on each, and a first line says on which the
deployment fits as asked and, where it does not, on how many of that GPU it would.
"""

from __future__ import annotations

from typing import Any

from kvlint import engines
from kvlint.capacity import sizing
from kvlint.codes import NOT_CHECKABLE, UNKNOWN_GPU, UNKNOWN_MODEL
from kvlint.deployment import Deployment, stated
from kvlint.findings import Location
from kvlint.report.plan_report import (
    PlanReport,
    render_fleet_json,
    render_fleet_text,
    render_json,
    render_text,
)
from kvlint.resolve import Defaults, resolve
from kvlint.units import parse_count


def plan_command(model: str, gpus: list[str], fmt: str, opts: dict[str, Any]) -> tuple[str, int]:
    """The deployment the options describe, resolved and planned on each GPU type; computed in
    capacity/sizing.py, rendered by report/plan_report.py. Exit 2 when the model or a GPU is
    unknown or an option is unreadable."""
    if not gpus:
        return "kvlint: name the GPU (--gpu NAME) or the fleet (--fleet L4,A100-80GB,H100)\n", 2
    reports: list[PlanReport] = []
    for gpu in gpus:
        report = _plan_one(model, gpu, opts)
        if isinstance(report, str):
            prefix = f"on {gpu}: " if len(gpus) > 1 else ""
            return f"kvlint: {prefix}{report}\n", 2
        reports.append(report)
    if len(reports) == 1:
        return (render_json(reports[0]) if fmt == "json" else render_text(reports[0])), 0
    return (render_fleet_json(reports) if fmt == "json" else render_fleet_text(reports)), 0


def _plan_one(model: str, gpu: str, opts: dict[str, Any]) -> PlanReport | str:
    """The plan on one GPU type, or the reason it cannot be made."""
    where = Location("<plan>", 1, 1)
    said: dict[str, Any] = {
        "model": stated(model, where),
        "gpu": stated(gpu, where),
        "engine": stated(opts.get("engine") or engines.DEFAULT, where),
    }
    try:
        if opts.get("engine_version"):
            said["engine_version"] = stated(opts["engine_version"], where)
        if opts.get("context"):
            said["max_context"] = stated(parse_count(opts["context"]).value, where)
        if opts.get("sequences"):
            said["max_sequences"] = stated(parse_count(opts["sequences"]).value, where)
        if opts.get("gpus"):
            said["tensor_parallel"] = stated(int(opts["gpus"]), where)
        if opts.get("utilization"):
            said["gpu_memory_utilization"] = stated(float(opts["utilization"]), where)
        if opts.get("kv_cache_dtype"):
            said["kv_cache_dtype"] = stated(opts["kv_cache_dtype"], where)
        if opts.get("quantization"):
            said["quantization"] = stated(opts["quantization"], where)
    except ValueError as exc:
        return str(exc)
    d = Deployment(file="<plan>", where=where, kind="plan", name=model, **said).freeze()
    r = resolve(d, Defaults())
    # an unknown GPU or model, or a model kvlint knows but cannot price (another kind, a GGUF repository)
    problems = [i for i in r.issues if i.code in (UNKNOWN_GPU, UNKNOWN_MODEL, NOT_CHECKABLE)]
    if problems or r.plan is None:
        return "; ".join(f"{i.message}" + (f" ({i.fix})" if i.fix else "") for i in problems) or "cannot plan"
    arch, s, p, g = r.model, r.settings, r.plan, r.gpu
    if arch is None or s is None or g is None:
        return "cannot plan"
    filled = s.in_force or r.in_force  # the engine's defaults, as its settings named them
    return PlanReport(
        arch,
        g,
        s,
        p,
        rows=sizing.concurrency_by_context(arch, g, s),
        smallest=sizing.smallest_fit(arch, g, s, s.max_num_seqs if opts.get("sequences") else 1),
        shares=sizing.memory_shares(p),
        defaults={
            k: v.note
            for k, v in (
                ("max_context", filled.max_context),
                ("max_sequences", filled.max_sequences),
                ("gpu_memory_utilization", filled.gpu_memory_utilization),
            )
            if v is not None and v.origin == "default"
        },
        model_how=r.model_how,
    )
