"""The human report: finding line, the source line with a caret under the value, arithmetic, fix."""

from __future__ import annotations

from kvlint.findings import Severity
from kvlint.report import config_report, infos, safe, suppressed

_COLORS = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m", Severity.INFO: "\x1b[1;36m"}
_DIM, _BOLD, _RESET = "\x1b[2m", "\x1b[1m", "\x1b[0m"


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color else text


def caret_lines(lines: dict[int, str], f) -> list[str]:
    """`  12 |     - --max-model-len=131072` and a caret row under the value."""
    line_no = f.where.line
    if line_no not in lines:
        return []
    if len(lines[line_no]) > 200:  # expandtabs(1) keeps the length: a long line is never expanded
        return []
    src = lines[line_no].expandtabs(1)
    src = src.rstrip()
    start = max(0, f.where.column - 1)
    end = f.where.end_column - 1 if f.where.end_line == line_no and f.where.end_column else len(src)
    end = max(start + 1, min(end, len(src)))
    # control characters in the line are shown escaped; the caret moves with them
    before, under = safe.plain(src[:start]), safe.plain(src[start:end]) or " "
    gutter = f"{line_no:>5} | "
    return [gutter + safe.plain(src), " " * (len(gutter) + len(before)) + "^" + "~" * (len(under) - 1)]


def summary(findings) -> str:
    counts = {s: 0 for s in Severity}
    for f in findings:
        counts[f.severity] += 1
    if not findings:
        return "kvlint: no problems found"
    parts = [
        f"{counts[s]} {s.label}{'s' if counts[s] != 1 else ''}"
        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
        if counts[s]
    ]
    return f"kvlint: {len(findings)} finding{'s' if len(findings) != 1 else ''} ({', '.join(parts)})"


def fixable(findings) -> str:
    """'; 1 fixable with --fix (2 more with --unsafe-fixes)', or nothing."""
    kinds = [next((x.applicability for x in f.fixes if x.edits), None) for f in findings]
    safe, unsafe = kinds.count("safe"), kinds.count("unsafe")
    if not safe and not unsafe:
        return ""
    parts = [f"{safe} fixable with --fix"] if safe else []
    if unsafe:
        parts.append(f"{unsafe} {'more' if safe else 'fixable'} with --unsafe-fixes")
    return "; " + ", ".join(parts)


def render(run, settings, color: bool = False) -> str:
    lines_by_file = {r.path: r.lines for r in run.files}
    out: list[str] = []
    for f in infos.listed(run.findings, settings):
        head = f"{f.where}: {_paint(f.severity.label, _COLORS[f.severity], color)} {_paint(f.rule, _BOLD, color)} {f.name}: {f.message}"
        out.append(head)
        for row in caret_lines(lines_by_file.get(f.where.file, {}), f):
            out.append(
                _paint(row, _DIM, color) if "|" in row[:8] else _paint(row, _COLORS[f.severity], color)
            )
        for d in f.details:
            out.append(f"      {d}")
        if f.fix:
            out.append(f"    {_paint('fix:', _BOLD, color)} {f.fix}")
        applicable = next((x for x in f.fixes if x.edits), None)
        if applicable is not None:
            flag = "--fix" if applicable.applicability == "safe" else "--unsafe-fixes"
            out.append(f"    ({applicable.applicability} fix available: kvlint {flag})")
        out.append("")
    out += infos.block(run.findings, settings)
    if suppressed.shown(settings):
        out += suppressed.lines(run) + ([""] if run.suppressed else [])
    out += [f"kvlint: note: {where}: {message}" for where, message in config_report.overrides(settings)]
    line = summary(run.findings) + fixable(run.findings)
    if not run.files:  # nothing was linted: "no problems found" would be a claim about nothing
        line = "kvlint: no files linted"
    if getattr(run, "skipped", ""):
        line += f" ({len(run.files)} file{'s' if len(run.files) != 1 else ''} linted; {run.skipped})"
    if suppressed.summary(run):
        line += "; " + suppressed.summary(run)
    if run.errors:  # the reasons went to stderr as they happened; the summary does not hide them
        n = len(run.errors)
        line += f"; {n} path{'s' if n != 1 else ''} could not be read (reasons on stderr)"
    out.append(line)
    return "\n".join(out) + "\n"
