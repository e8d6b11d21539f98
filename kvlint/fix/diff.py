"""A unified diff of a file before and after its fixes, in the form `patch -p0` applies."""

from __future__ import annotations

import difflib


def unified(path: str, before: str, after: str) -> str:
    if before == after:
        return ""
    a, b = _lines(before), _lines(after)
    lines = []
    for line in difflib.unified_diff(a, b, fromfile=path, tofile=path):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _lines(text: str) -> list[str]:
    """Lines as `patch` counts them: split after each \\n only (str.splitlines also splits on \\f, \\v …)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
