"""report: formatting only. Each module renders a RunResult; none computes anything."""

from __future__ import annotations

FORMATS = ("text", "concise", "json", "sarif", "github", "markdown", "rdjson")


def render(fmt: str, run, settings, color: bool = False) -> str:
    """The report in `fmt`; every string from input is neutralised for it (report/safe.py)."""
    from kvlint.report import safe

    if fmt in ("text", "concise", "github"):
        run = safe.plain_run(run)
    if fmt == "json":
        from kvlint.report import json_report as mod
    elif fmt == "concise":
        from kvlint.report import concise as mod
    elif fmt == "sarif":
        from kvlint.report import sarif as mod
    elif fmt == "github":
        from kvlint.report import github as mod
    elif fmt == "markdown":
        from kvlint.report import markdown as mod
    elif fmt == "rdjson":
        from kvlint.report import rdjson as mod
    else:
        from kvlint.report import text as mod
    return mod.render(run, settings, color=color)
