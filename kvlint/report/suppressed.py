"""What inline suppressions hid, for every report: a count with where (always), and with
--show-suppressed each suppressed finding and the comment or annotation that suppressed it."""

from __future__ import annotations

from collections import Counter


def summary(run) -> str:
    """`2 findings suppressed (1 in a.yaml, 1 in b.yaml)`, or "" when nothing was suppressed."""
    items = run.suppressed
    if not items:
        return ""
    per_file = Counter(f.where.file for f in items)
    where = ", ".join(f"{n} in {name}" for name, n in sorted(per_file.items()))
    return f"{len(items)} finding{'s' if len(items) != 1 else ''} suppressed ({where})"


def shown(settings) -> bool:
    return bool(getattr(settings, "show_suppressed", False))


def lines(run) -> list[str]:
    """One line per suppressed finding: `a.yaml:6:14: suppressed KV102 name: message [by …]`."""
    return [
        f"{f.where}: suppressed {f.rule} {f.name}: {f.message} [by {f.suppressed_by}]" for f in run.suppressed
    ]
