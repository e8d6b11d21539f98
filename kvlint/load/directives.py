"""Inline suppression comments, read from the raw lines.

    # kvlint: disable=KV103 -- the pool is sized for the p50 context, see runbook
    # kvlint: disable=KV102,kv-cache-below-worst-case
    # kvlint: disable-file=KV103 -- reason

`disable` on a line with content covers that line; alone on its line it covers the next line
that is neither blank nor a comment. `disable-file` covers the whole file wherever it stands.
Rules are named by code or by name; what they mean is settled by the runner, not here.
"""

from __future__ import annotations

import re

from kvlint.findings import Location
from kvlint.record import record

_COMMENT_RE = re.compile(r"(?:^|\s)#\s*kvlint:(.*)$")
_BODY_RE = re.compile(r"^\s*(disable-file|disable)\s*=\s*([A-Za-z0-9_,\s-]+?)\s*(?:--\s*(.*))?$")


@record(frozen=True)
class Directive:
    kind: str  # "line" | "file" | "bad" (a `# kvlint:` comment kvlint cannot read)
    rules: tuple[str, ...]  # as written: codes (KV103) or names (kv-cache-below-worst-case)
    reason: str
    where: Location  # the comment itself
    covers_line: int  # 1-based line a "line" directive applies to; 0 when it covers none


def read_directives(lines: list[str], path: str) -> list[Directive]:
    out: list[Directive] = []
    pending: list[Directive] = []  # stand-alone directives waiting for the next content line
    for i, line in enumerate(lines, start=1):
        stripped = line.strip()
        m = _COMMENT_RE.search(line) if "kvlint" in line else None
        if m is None:
            if pending and stripped and not stripped.startswith("#"):
                out.extend(Directive(d.kind, d.rules, d.reason, d.where, i) for d in pending)
                pending.clear()
            continue
        col = line.index("#", m.start()) + 1
        where = Location(path, i, col, i, len(line.rstrip()) + 1)
        body = _BODY_RE.match(m.group(1))
        if body is None:
            out.append(Directive("bad", (), m.group(1).strip(), where, 0))
            continue
        verb, codes, reason = body.group(1), body.group(2), (body.group(3) or "").strip()
        rules = tuple(c.strip() for c in codes.replace(" ", ",").split(",") if c.strip())
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
