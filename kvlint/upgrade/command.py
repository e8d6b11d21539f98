"""`kvlint upgrade PATHS…`: every deployment of the files walked release by release, reported.

Exit 0: no later release turns a passing deployment into an error; 1: one does; 2: a file could not be
read or holds input kvlint cannot parse (said on stderr, located as `kvlint check` says it), or the
options are wrong.
"""

from __future__ import annotations

from kvlint import engines
from kvlint.run.settings import Settings
from kvlint.upgrade import report
from kvlint.upgrade.deployments import Walk, walk_file


def bad_to(to: str | None) -> str | None:
    """Why --to names no release any engine reads, or None."""
    if to is None or any(engines.get(name).release(to) is not None for name in engines.names()):
        return None
    return f"--to {to!r} is not a release (e.g. 0.20.0)"


def walk_paths(
    shown: list[tuple[str, str]], settings: Settings, to: str | None, fmt: str, errors: list[str]
) -> tuple[str, int]:
    """The report and the exit code for the discovered files; `errors` gathers the diagnostics."""
    walks: list[Walk] = []
    for path, display in shown:
        found = walk_file(path, display, settings, to)
        walks.extend(found.walks)
        errors.extend(found.problems)
    text = report.as_json(walks, errors) if fmt == "json" else report.text(walks)
    if errors:
        return text, 2
    return text, 1 if any(w.breaks for w in walks) else 0


__all__ = ["bad_to", "walk_paths"]
