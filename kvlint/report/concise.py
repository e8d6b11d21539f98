"""`--format concise`: one grep-able line per finding: path:line:col: severity CODE message."""

from __future__ import annotations


def render(run, settings, color: bool = False) -> str:
    out = [f"{f.where}: {f.severity.label} {f.rule} {f.message}" for f in run.findings]
    return "\n".join(out) + ("\n" if out else "")
