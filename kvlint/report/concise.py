"""`--format concise`: one grep-able line per finding: path:line:col: severity CODE message."""

from __future__ import annotations


def render(run, settings, color: bool = False) -> str:
    from kvlint.report import config_report, suppressed

    out = [f"{f.where}: {f.severity.label} {f.rule} {f.message}" for f in run.findings]
    out += suppressed.lines(run) if suppressed.shown(settings) else []
    if suppressed.summary(run):
        out.append(f"kvlint: {suppressed.summary(run)}")
    out += [f"kvlint: note: {where}: {message}" for where, message in config_report.overrides(settings)]
    return "\n".join(out) + ("\n" if out else "")
