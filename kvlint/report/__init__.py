"""report: formatting only. Each module renders a RunResult; none computes anything."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvlint.run.lint import RunResult
    from kvlint.run.settings import Settings

# The one registry of output formats: format name -> the module that renders it (loaded on use).
_MODULES = {
    "text": "text",
    "concise": "concise",
    "json": "json_report",
    "sarif": "sarif",
    "github": "github",
    "markdown": "markdown",
    "rdjson": "rdjson",
}
FORMATS = tuple(_MODULES)


def render(fmt: str, run: RunResult, settings: Settings, color: bool = False) -> str:
    """The report in `fmt`; every string from input is neutralised for it (report/safe.py)."""
    from kvlint.report import safe

    if fmt in ("text", "concise", "github"):
        run = safe.plain_run(run)
    module = import_module(f"{__name__}.{_MODULES.get(fmt, 'text')}")
    text: str = module.render(run, settings, color=color)
    if fmt in ("json", "sarif", "rdjson"):
        return safe.json_text(text)
    # github: every line is a command kvlint wrote, its input confined to escaped properties
    return text if fmt == "github" else safe.runner_lines(text)
