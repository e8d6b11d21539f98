"""Inline suppression comments, read from real YAML comments.

    # kvlint: disable=KV103 -- the pool is sized for the p50 context, see runbook
    # kvlint: disable=KV102,kv-cache-below-worst-case
    # kvlint: disable-file=KV103 -- reason

`disable` on a line with content covers that line; alone on its line it covers the next line
that is neither blank nor a comment. `disable-file` covers the whole file wherever it stands.
Rules are named by code or by name; what they mean is settled by the runner, not here.

Only comments count: a `# kvlint:` inside a quoted or block scalar (a string, a shell script) is
data, not a directive. The scan uses plain string methods, one pass over each line, so its cost is
linear in the input whatever the text (no regular expression runs on it).
"""

from __future__ import annotations

from bisect import bisect_right

from kvlint.findings import Location
from kvlint.record import record

_CODE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_,- \t")
_BLANKS = " \t"

# (start line, start column, end line, end column), 0-based: where a string's text lies
Span = tuple[int, int, int, int]


@record(frozen=True)
class Directive:
    kind: str  # "line" | "file" | "bad" (a `# kvlint:` comment kvlint cannot read)
    rules: tuple[str, ...]  # as written: codes (KV103) or names (kv-cache-below-worst-case)
    reason: str
    where: Location  # the comment itself
    covers_line: int  # 1-based line a "line" directive applies to; 0 when it covers none


class _Strings:
    """The spans of quoted and block scalars, sorted, for an O(log n) "is this inside a string"."""

    def __init__(self, spans: list[Span]) -> None:
        self.spans = sorted(spans)
        self.starts = [(s[0], s[1]) for s in self.spans]

    def contains(self, line: int, col: int) -> bool:
        i = bisect_right(self.starts, (line, col)) - 1
        if i < 0:
            return False
        _, _, end_line, end_col = self.spans[i]
        return (line, col) < (end_line, end_col)


def find_comment(line: str, lineno: int = 0, strings: _Strings | None = None) -> int:
    """Index of the `#` that starts a `# kvlint:` comment on this line, or -1. A YAML comment's `#`
    starts the line or follows whitespace; whitespace may separate it from `kvlint:`."""
    n = len(line)
    pos = line.find("#")
    while pos >= 0:
        if pos == 0 or line[pos - 1] in _BLANKS:
            j = pos + 1
            while j < n and line[j] in _BLANKS:
                j += 1
            if line.startswith("kvlint:", j) and not (strings and strings.contains(lineno, pos)):
                return pos
            pos = line.find("#", j if j > pos + 1 else pos + 1)
        else:
            pos = line.find("#", pos + 1)
    return -1


def parse_body(body: str) -> tuple[str, tuple[str, ...], str] | None:
    """`disable=KV103,KV102 -- reason` -> ("disable", ("KV103", "KV102"), "reason"); None if unreadable."""
    text = body.strip()
    for verb in ("disable-file", "disable"):
        if text.startswith(verb):
            rest = text[len(verb) :].lstrip()
            break
    else:
        return None
    if not rest.startswith("="):
        return None
    codes, _, reason = rest[1:].partition("--")
    if not codes.strip() or any(c not in _CODE_CHARS for c in codes):
        return None
    rules = tuple(c for c in codes.replace("\t", ",").replace(" ", ",").split(",") if c)
    return verb, rules, reason.strip()


def read_directives(lines: list[str], path: str, string_spans: list[Span] | None = None) -> list[Directive]:
    strings = _Strings(string_spans) if string_spans else None
    out: list[Directive] = []
    pending: list[Directive] = []  # stand-alone directives waiting for the next content line
    for i, line in enumerate(lines, start=1):
        stripped = line.strip()
        col = find_comment(line, i - 1, strings) if "kvlint" in line else -1
        if col < 0:
            if pending and stripped and not stripped.startswith("#"):
                out.extend(Directive(d.kind, d.rules, d.reason, d.where, i) for d in pending)
                pending.clear()
            continue
        where = Location(path, i, col + 1, i, len(line.rstrip()) + 1)
        raw = line[line.index("kvlint:", col) + len("kvlint:") :]
        parsed = parse_body(raw)
        if parsed is None:
            out.append(Directive("bad", (), raw.strip(), where, 0))
            continue
        verb, rules, reason = parsed
        if verb == "disable-file":
            out.append(Directive("file", rules, reason, where, 0))
        elif stripped.startswith("#"):
            pending.append(Directive("line", rules, reason, where, 0))
        else:
            out.append(Directive("line", rules, reason, where, i))
            out.extend(Directive(d.kind, d.rules, d.reason, d.where, i) for d in pending)
            pending.clear()
    out.extend(pending)  # at the end of the file they cover nothing and will be reported unused
    return out
