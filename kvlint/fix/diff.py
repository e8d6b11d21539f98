"""A unified diff of a file before and after its fixes, in the form `patch -p0` applies."""

from __future__ import annotations

import difflib
import os
import secrets


def unified(path: str, before: str, after: str) -> str:
    if before == after:
        return ""
    a, b = _lines(before), _lines(after)
    lines = []
    name = quoted(path)
    for line in difflib.unified_diff(a, b, fromfile=name, tofile=name):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _lines(text: str) -> list[str]:
    """Lines as `patch` counts them: split after each \\n only (str.splitlines also splits on \\f, \\v …)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


_C_ESCAPES = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}


def quoted(path: str) -> str:
    """The path as git writes it in a diff header (quote_c_style): unchanged when it is printable
    ASCII without `"` or `\\`, else in double quotes with C escapes and octal bytes, which GNU patch
    reads back. A name with a line break can then not add a header line of its own (`+++ other`)."""
    raw = path.encode("utf-8", "surrogateescape" if _escaped_only(path) else "replace")
    if all(0x20 <= c < 0x7F and c not in (34, 92) for c in raw):
        return raw.decode("ascii")
    out = []
    for c in raw:
        if c in _C_ESCAPES:
            out.append("\\" + _C_ESCAPES[c])
        elif 0x20 <= c < 0x7F:
            out.append(chr(c))
        else:
            out.append(f"\\{c:03o}")
    return '"' + "".join(out) + '"'


def _escaped_only(path: str) -> bool:
    """True when every surrogate in the name stands for a byte (os.fsdecode's surrogateescape)."""
    return all(not 0xD800 <= ord(ch) <= 0xDFFF or 0xDC80 <= ord(ch) <= 0xDCFF for ch in path)


def for_runner(diff: str) -> str:
    """The diff as the GitHub Actions runner may read it: under GITHUB_ACTIONS, between
    `::stop-commands::TOKEN` and `::TOKEN::` (a random token), so that no line of the files shown
    (a context line ` ::error file=…::…`, which the runner reads after trimming its blanks) is taken
    as a workflow command (security review 3, S14). Elsewhere the diff is unchanged (`patch -p0`)."""
    if not diff or os.environ.get("GITHUB_ACTIONS") != "true":
        return diff
    token = secrets.token_hex(16)
    return f"::stop-commands::{token}\n{diff}::{token}::\n"
