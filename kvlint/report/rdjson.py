"""`--format rdjson`: reviewdog's Diagnostic Format, so fixes arrive as suggested changes on a pull
request's lines (`reviewdog -f=rdjson -reporter=github-pr-review`).

Each finding is one diagnostic with its rule as `code` (and the rule page as its url); the edits of
its first applicable fix (safe, else unsafe) are its `suggestions` — only the first, since reviewdog
applies a diagnostic's suggestions together and a finding's fixes are alternatives. Columns are
UTF-8 byte counts, as the format defines them.
"""

from __future__ import annotations

import json

from kvlint.findings import Location, Severity

DOCS_URL = "https://github.com/kvlint/kvlint/blob/main/rules"
_SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}


def _byte_column(lines: dict[int, str], line: int, column: int) -> int:
    text = lines.get(line)
    if text is None:
        return column
    return len(text[: column - 1].encode("utf-8", "surrogatepass")) + 1


def _range(lines: dict[int, str], w: Location) -> dict:
    start = {"line": w.line, "column": _byte_column(lines, w.line, w.column)}
    end_line = w.end_line or w.line
    end_column = w.end_column if w.end_column is not None else w.column
    return {"start": start, "end": {"line": end_line, "column": _byte_column(lines, end_line, end_column)}}


def render(run, settings, color: bool = False) -> str:
    lines_by_file = {r.path: r.lines for r in run.files}
    diagnostics = []
    for f in run.findings:
        lines = lines_by_file.get(f.where.file, {})
        diag: dict = {
            "message": f.message + (f"\nfix: {f.fix}" if f.fix else ""),
            "location": {"path": f.where.file, "range": _range(lines, f.where)},
            "severity": _SEVERITY[f.severity],
            "code": {"value": f.rule, "url": f"{DOCS_URL}/{f.rule}.md"},
        }
        fix = next((x for x in f.fixes if x.edits and x.applicability in ("safe", "unsafe")), None)
        if fix is not None:
            diag["suggestions"] = [{"range": _range(lines, e.where), "text": e.text} for e in fix.edits]
        diagnostics.append(diag)
    doc = {
        "source": {"name": "kvlint", "url": DOCS_URL.rsplit("/blob/", 1)[0]},
        "severity": "WARNING",
        "diagnostics": diagnostics,
    }
    from kvlint.report.safe import scrub

    return json.dumps(scrub(doc), indent=2) + "\n"
