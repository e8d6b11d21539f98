"""Checking a round of fixes on the text it produced, before the round is kept.

A fix is kept only when, linting the fixed text again,
- the file still reads as YAML (no new KV001);
- every edit that says what the engine must read (`Edit.reads`) is read so: a stated setting lies in
  the edit's new text and its value is the one the fix wrote, through kvlint's own reader of that
  engine's options (an edit that lands inside another word, `--gpu-memory-utilizati0.9`, reads as
  nothing);
- its finding is gone (a fix whose finding survives it did not take effect, and is not applied again);
- no new reading problem appeared (KV001-KV005, KV007: a value kvlint or the engine cannot read,
  an unknown flag, an unreadable model or GPU). A new finding about capacity is the setting's
  consequence, not a broken edit: a context made to fit can leave too little for all sequences at
  once (KV103), which the next round fixes in its turn.
Otherwise the round is not kept and the fixes that failed are named (kvlint/fix/apply.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from kvlint.codes import (
    INVALID_INPUT,
    MATCHED_BY_NAME,
    NOT_CHECKABLE,
    UNKNOWN_GPU,
    UNKNOWN_MODEL,
    UNPARSED_SETTING,
)
from kvlint.deployment import Deployment, Value
from kvlint.findings import Finding, Fix
from kvlint.fix.materialize import SourceLines
from kvlint.load.source import LINE_BREAK

READING = (INVALID_INPUT, UNKNOWN_GPU, UNKNOWN_MODEL, NOT_CHECKABLE, UNPARSED_SETTING, MATCHED_BY_NAME)


def fix_key(f: Finding, fix: Fix) -> tuple[str, str]:
    return f.rule, fix.message


def problems(
    before: Sequence[Finding],
    after: Any,
    applied: list[tuple[Finding, Fix]],
    spans: list[list[tuple[int, int]]],
    text: str,
    offered: Counter[tuple[str, str]],
    still: Counter[tuple[str, str]],
) -> list[tuple[int | None, str]]:
    """What is wrong with the round: (index in `applied` of the fix at fault, or None, the reason).
    `after` is the re-lint's FileResult; `offered` / `still` count the trusted fixes before and after."""
    out: list[tuple[int | None, str]] = []
    old = Counter(f.rule for f in before)
    now = Counter(g.rule for g in after.findings)
    new_findings = [f for f in after.findings if f.rule in READING and now[f.rule] > old[f.rule]]
    broken = [f for f in new_findings if f.rule == INVALID_INPUT]
    if broken:
        out.append((None, f"the fixed text does not read: {broken[0].message} (line {broken[0].where.line})"))
        return out
    done = Counter(fix_key(f, fix) for f, fix in applied)
    for i, (f, fix) in enumerate(applied):
        key = fix_key(f, fix)
        if still[key] > offered[key] - done[key]:
            out.append((i, "its finding is still there after it was applied"))
            continue
        reason = _misread(fix, spans[i], text, after.deployments)
        if reason:
            out.append((i, reason))
    lines = SourceLines(text)
    for g in new_findings:
        owner = next(
            (
                i
                for i, sp in enumerate(spans)
                for s, e in sp
                if _lines(lines, s, e)[0] <= g.where.line <= _lines(lines, s, e)[1]
            ),
            None,
        )
        out.append((owner, f"the fixed file has a new {g.rule} finding: {g.message}"))
    return out


def _lines(src: SourceLines, start: int, end: int) -> tuple[int, int]:
    return src.position(start)[0], src.position(end)[0]


def _misread(fix: Fix, spans: list[tuple[int, int]], text: str, resolved: list) -> str:
    src = SourceLines(text, LINE_BREAK())  # the parser's lines: where the re-lint's values sit
    for edit, (start, end) in zip(fix.edits, spans, strict=False):
        if edit.reads is None:
            continue
        first, last = src.position(start), src.position(end)
        found = [v for r in resolved for v in _stated(r.deployment) if _within(v, first, last)]
        if not found:
            return f"the edited text is not read as a setting (expected {edit.reads})"
        if not any(_reads_as(v.value, edit.reads) for v in found):
            return f"the edited setting reads as {found[0].value!r}, not {edit.reads}"
    return ""


def _stated(d: Deployment) -> list[Value]:
    out: list[Value] = []
    for name in type(d).__record_fields__:  # type: ignore[attr-defined]
        value = getattr(d, name)
        items = value.values() if isinstance(value, dict) else (value,)
        out.extend(v for v in items if isinstance(v, Value) and v.origin == "stated" and v.where is not None)
    return out


def _within(v: Value, first: tuple[int, int], last: tuple[int, int]) -> bool:
    """The value is located at the edit's new text: one span holds the other (a value's place may
    include its quotes, an inserted `, "--flag", "8192"` holds its value's)."""
    w = v.where
    assert w is not None
    start, end = (w.line, w.column), (w.end_line or w.line, w.end_column or w.column)
    return (first <= start and end <= last) or (start <= first and last <= end)


def _reads_as(value: object, text: str) -> bool:
    if isinstance(value, bool):
        return str(value).lower() == text.lower()
    if isinstance(value, int | float):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    return str(value) == text
