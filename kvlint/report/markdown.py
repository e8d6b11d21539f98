"""`--format markdown`: for $GITHUB_STEP_SUMMARY or a pull-request comment.

A table of deployments (model, GPU x count, context, sequences, KV tokens, concurrency, verdict),
a mermaid pie of each deployment's GPU memory (weights / KV pool / activations and runtime /
headroom), then the findings.
"""

from __future__ import annotations

from kvlint.findings import Severity
from kvlint.report import safe
from kvlint.units import GIB

_ICON = {Severity.ERROR: "❌ error", Severity.WARNING: "⚠️ warning", Severity.INFO: "ℹ️ info"}


def _cell(text) -> str:
    """A table cell or list item: no input can close the table, open a code block, link or tag."""
    return safe.markdown(text)


def _verdict(r, findings) -> str:
    mine = [f for f in findings if f.deployment == r.deployment.label() and f.where.file == r.deployment.file]
    if any(f.severity == Severity.ERROR for f in mine):
        return "❌ " + ", ".join(sorted({f.rule for f in mine if f.severity == Severity.ERROR}))
    if any(f.severity == Severity.WARNING for f in mine):
        return "⚠️ " + ", ".join(sorted({f.rule for f in mine if f.severity == Severity.WARNING}))
    if r.plan is None:
        return "— not checked"
    return "✅ fits"


def _pie(r) -> list[str]:
    p = r.plan
    weights = p.weights_per_gpu
    runtime = sum(t.bytes for t in p.terms if t.label != "weights")
    pool = max(0, p.kv_pool)
    headroom = max(0, p.gpu_total - weights - runtime - pool)
    title = f"{r.deployment.label()}: one {r.gpu.name} ({p.gpu_total / GIB:.2f} GiB)"
    return [
        "```mermaid",
        "pie showData",
        f"  title {safe.mermaid(title)}",
        f'  "Weights" : {weights / GIB:.2f}',
        f'  "KV cache pool" : {pool / GIB:.2f}',
        f'  "Activations and runtime" : {runtime / GIB:.2f}',
        f'  "Headroom" : {headroom / GIB:.2f}',
        "```",
    ]


def render(run, settings, color: bool = False) -> str:
    findings = run.findings
    out = ["## kvlint", ""]
    deps = run.deployments
    if deps:
        out += [
            "| deployment | model | GPU × count | context | sequences | KV tokens | max concurrency | verdict |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in deps:
            d, p = r.deployment, r.plan
            gpus = d.gpus.value if d.gpus else (r.settings.tp * r.settings.pp if r.settings else "?")
            f = r.in_force
            gpu = r.gpu.id if r.gpu else (f.gpu.value if f.gpu else "?")
            out.append(
                "| "
                + " | ".join(
                    _cell(x)
                    for x in (
                        f"{d.file}:{d.where.line} {d.label()}",
                        d.model.value if d.model else "?",
                        f"{gpu} × {gpus}",
                        f"{f.max_context.value:,}" if f.max_context else "?",
                        f"{f.max_sequences.value:,}" if f.max_sequences else "?",
                        f"{p.kv_tokens:,}" if p else "—",
                        f"{p.max_concurrency:.2f}" if p else "—",
                        _verdict(r, findings),
                    )
                )
                + " |"
            )
        out.append("")
        for r in deps:
            if r.plan is not None and r.gpu is not None:
                out += _pie(r) + [""]
    if findings:
        out += ["### Findings", "", "| where | rule | severity | message |", "|---|---|---|---|"]
        for f in findings:
            out.append(
                f"| {_cell(str(f.where))} | {f.rule} {f.name} | {_ICON[f.severity]} | {_cell(f.message)} |"
            )
        out.append("")
    else:
        out += ["No findings.", ""]
    from kvlint.report import suppressed

    if suppressed.summary(run):
        out += [f"Suppressed: {_cell(suppressed.summary(run))}.", ""]
        if suppressed.shown(settings):
            out += [f"- {_cell(line)}" for line in suppressed.lines(run)] + [""]
    from kvlint.report import config_report

    for where, message in config_report.overrides(settings):
        out.append(f"- configuration: {_cell(where)}: {_cell(message)}")
    for err in run.errors:
        out.append(f"- error: {_cell(err)}")
    return "\n".join(out) + "\n"
