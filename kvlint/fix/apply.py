"""Applying fixes: pick the first trusted fix of each finding, apply the edits that do not overlap,
lint again, and repeat (a bounded number of rounds) until nothing more can be fixed.

Only the characters an edit replaces change: the rest of the file — comments, quoting, indentation,
key order, line breaks — stays byte for byte what it was.
"""

from __future__ import annotations

import codecs
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kvlint.findings import Applicability, Edit, Finding, Fix
from kvlint.fix.materialize import SourceLines
from kvlint.fix.verify import fix_key, problems
from kvlint.load.source import PHYSICAL_BREAK
from kvlint.record import field, record

MAX_ROUNDS = 6  # rounds kept
MAX_LINTS = 12  # lints in all, the rounds that failed their check and were retried included


class Linted(Protocol):
    """What a lint of one file gives the rounds: its findings, and the workloads read from it (each
    with its `deployment`), whose stated settings the check of a round reads (kvlint/fix/verify.py)."""

    @property
    def findings(self) -> Sequence[Finding]: ...

    @property
    def deployments(self) -> Sequence[Any]: ...


Lint = Callable[[bytes], Linted]
"""One file's bytes -> its lint: the run layer's linter bound to the file (its name, settings
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
    refused: list[str] = field(default_factory=list)  # fixes not applied: their check failed (located)

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
    out, applied, _ = apply_with_spans(text, fixes)
    return out, applied


def apply_with_spans(text: str, fixes: list[Fix]) -> tuple[str, list[Fix], list[list[tuple[int, int]]]]:
    """`apply_fixes`, and for each fix applied the offsets its edits' new text spans in the result."""
    src = SourceLines(text, PHYSICAL_BREAK())  # reported edits are on physical lines
    taken: list[tuple[int, int, str, int]] = []  # start, end, new text, index of the fix in `applied`
    applied: list[Fix] = []
    for fix in fixes:
        spans = [_span(e, src) for e in fix.edits]
        if any(s is None for s in spans):
            continue
        mine = [(s[0], s[1], e.text) for s, e in zip(spans, fix.edits, strict=True) if s is not None]
        if any(_overlaps(a, b[:3]) for a in mine for b in taken) or any(
            _overlaps(a, b) for i, a in enumerate(mine) for b in mine[i + 1 :]
        ):
            continue
        taken.extend((*m, len(applied)) for m in mine)
        applied.append(fix)
    parts: list[str] = []
    placed: list[list[tuple[int, int]]] = [[] for _ in applied]
    at, size = 0, 0  # the next unread offset of `text`; the length of the output so far
    for start, end, new, owner in sorted(taken, key=lambda t: (t[0], t[1])):
        parts += [text[at:start], new]
        size += start - at
        placed[owner].append((size, size + len(new)))
        size += len(new)
        at = end
    parts.append(text[at:])
    return "".join(parts), applied, placed


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
    name its findings locate edits in.

    Each round is checked on the text it produced (kvlint/fix/verify.py) and kept only when it
    passes; a round that fails is retried one fix at a time, and a fix that fails alone is not
    applied (FixOutcome.refused says where and why). A fix counts once, when its round is kept."""
    decoded = _decode(data)
    if decoded is None:
        return data, FixOutcome("", "", encodable=False)
    text, bom = decoded
    outcome = FixOutcome(text, text)

    def lint_round(t: str) -> Linted:
        return lint(bom + t.encode("utf-8"))

    result = lint_round(text)
    failed: set[tuple[str, str]] = set()
    single, kept, lints = False, 0, 1
    while kept < MAX_ROUNDS and lints < MAX_LINTS:
        chosen = _chosen(result.findings, display, unsafe, failed)
        if not chosen:
            break
        if single:
            chosen = chosen[:1]
        new_text, fixes, spans = apply_with_spans(outcome.after, [fix for _, fix in chosen])
        if not fixes or new_text == outcome.after:
            break
        by_fix = {id(fix): f for f, fix in chosen}
        applied = [(by_fix[id(fix)], fix) for fix in fixes]
        after = lint_round(new_text)
        lints += 1
        wrong = problems(
            result.findings,
            after,
            applied,
            spans,
            new_text,
            _offered(result.findings, unsafe),
            _offered(after.findings, unsafe),
        )
        if not wrong:
            outcome.applied += [
                Applied(f.rule, f.where.line, fix.message, fix.applicability) for f, fix in applied
            ]
            outcome.after, result, kept = new_text, after, kept + 1
            continue
        if len(applied) > 1:
            single = True  # which fix is at fault: one at a time from here
            continue
        f, fix = applied[0]
        failed.add(fix_key(f, fix))
        outcome.refused.append(
            f"{display}:{f.where.line}: {f.rule} fix not applied ({fix.message}): {wrong[0][1]}"
        )
    return bom + outcome.after.encode("utf-8"), outcome


def _chosen(findings, display: str, unsafe: bool, failed: set[tuple[str, str]]) -> list[tuple[Finding, Fix]]:
    """The findings' trusted fixes, but not one that already failed its check; an edit located in
    another file (a KServe runtime beside this one) is not applied to this one."""
    return [
        (f, fix)
        for f in findings
        if (fix := trusted_fix(f, unsafe)) is not None
        and all(e.where.file == display for e in fix.edits)
        and fix_key(f, fix) not in failed
    ]


def _offered(findings, unsafe: bool) -> Counter[tuple[str, str]]:
    return Counter(fix_key(f, fix) for f in findings if (fix := trusted_fix(f, unsafe)) is not None)
