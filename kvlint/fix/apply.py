"""Applying fixes: pick the first trusted fix of each finding, apply the edits that do not overlap,
lint again, and repeat (a bounded number of rounds) until nothing more can be fixed.

Only the characters an edit replaces change: the rest of the file — comments, quoting, indentation,
key order, line breaks — stays byte for byte what it was.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence

from kvlint.findings import Applicability, Edit, Finding, Fix
from kvlint.fix.materialize import SourceLines
from kvlint.load.source import PHYSICAL_BREAK
from kvlint.record import field, record

MAX_ROUNDS = 6

Lint = Callable[[bytes], Sequence[Finding]]
"""One file's bytes -> its findings: the run layer's linter bound to the file (its name, settings
and what is beside it), passed in so that fix/ does not import the run layer that imports it."""


@record
class Applied:
    rule: str
    line: int
    message: str  # the fix's own description
    applicability: str


@record
class FixOutcome:
    before: str
    after: str
    applied: list[Applied] = field(default_factory=list)
    encodable: bool = True  # False: the file's encoding is not one kvlint writes back

    @property
    def changed(self) -> bool:
        return self.after != self.before


def trusted_fix(f: Finding, unsafe: bool) -> Fix | None:
    """The first fix of the finding that may be applied in this mode (the least disruptive comes first)."""
    allowed = (Applicability.SAFE, Applicability.UNSAFE) if unsafe else (Applicability.SAFE,)
    for fix in f.fixes:
        if fix.edits and fix.applicability in allowed:
            return fix
    return None


def _span(edit: Edit, src: SourceLines) -> tuple[int, int] | None:
    w = edit.where
    start = src.offset(w.line, w.column)
    end = src.offset(w.end_line if w.end_line is not None else w.line, w.end_column or w.column)
    if start is None or end is None or end < start:
        return None
    return start, end


def apply_fixes(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
    """Apply the fixes whose edits overlap no edit already taken; return the text and those applied."""
    src = SourceLines(text, PHYSICAL_BREAK)  # reported edits are on physical lines
    taken: list[tuple[int, int, str]] = []
    applied: list[Fix] = []
    for fix in fixes:
        spans = [_span(e, src) for e in fix.edits]
        if any(s is None for s in spans):
            continue
        mine = [(s[0], s[1], e.text) for s, e in zip(spans, fix.edits, strict=True) if s is not None]
        if any(_overlaps(a, b) for a in mine for b in taken) or any(
            _overlaps(a, b) for i, a in enumerate(mine) for b in mine[i + 1 :]
        ):
            continue
        taken.extend(mine)
        applied.append(fix)
    out = text
    for start, end, new in sorted(taken, key=lambda t: (t[0], t[1]), reverse=True):
        out = out[:start] + new + out[end:]
    return out, applied


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # insertions: only two at the same point collide
        return a[0] == b[0] or (a[0] < b[0] < a[1]) or (b[0] < a[0] < b[1])
    return a[0] < b[1] and b[0] < a[1]


def _decode(data: bytes) -> tuple[str, bytes] | None:
    """The text and the byte-order mark to put back; None for encodings kvlint does not write."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    try:
        return data[len(bom) :].decode("utf-8"), bom
    except UnicodeDecodeError:
        return None


def fix_bytes(data: bytes, display: str, lint: Lint, unsafe: bool) -> tuple[bytes, FixOutcome]:
    """Lint, apply the trusted fixes, lint again, up to MAX_ROUNDS; the new bytes and what was done.
    `lint` reads what is beside the file as the check does (a KServe runtime); `display` is the
    name its findings locate edits in."""
    decoded = _decode(data)
    if decoded is None:
        return data, FixOutcome("", "", encodable=False)
    text, bom = decoded
    outcome = FixOutcome(text, text)
    for _ in range(MAX_ROUNDS):
        findings = lint(bom + outcome.after.encode("utf-8"))
        chosen = [
            (f, fix)
            for f in findings
            if (fix := trusted_fix(f, unsafe)) is not None and all(e.where.file == display for e in fix.edits)
        ]  # an edit located in another file (a KServe runtime beside this one) is not applied to this one
        if not chosen:
            break
        new_text, applied = apply_fixes(outcome.after, [fix for _, fix in chosen])
        if not applied or new_text == outcome.after:
            break
        by_fix = {id(fix): f for f, fix in chosen}
        for fix in applied:
            f = by_fix[id(fix)]
            outcome.applied.append(Applied(f.rule, f.where.line, fix.message, fix.applicability))
        outcome.after = new_text
    return bom + outcome.after.encode("utf-8"), outcome
