"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning.

One run; `tool.driver.rules[]` lists every rule (stable order and ids) with its summary, full
description, help text and a link to its page; `results[]` is present even when empty; each result
points at the value at fault (start and end line and column) by a path relative to the working
directory, so alerts stay stable between runs.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

from kvlint import __version__
from kvlint.findings import Severity

DOCS_URL = "https://github.com/kvlint/kvlint/blob/main/rules"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _section(doc: str, title: str) -> str:
    if title not in doc:
        return ""
    body = doc.split(title, 1)[1].split("\n## ", 1)[0]
    return " ".join(body.split())


def rule_descriptor(rule) -> dict:
    doc = inspect.cleandoc(type(rule).__doc__ or "")
    what = _section(doc, "## What it does") or rule.summary()
    why = _section(doc, "## Why is this bad?")
    fix = _section(doc, "## How to fix")
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()[:1024]},
        "fullDescription": {"text": what[:1024]},
        "help": {"text": f"{why} Fix: {fix}"[:4000], "markdown": doc[:8000]},
        "helpUri": f"{DOCS_URL}/{rule.id}.md",
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"tags": ["kvlint", "capacity" if rule.id.startswith("KV1") else "configuration"]},
    }


def _uri(path: str) -> str:
    """A relative URI reference, percent-encoded from the path's bytes (`#`, `?`, `%`, spaces,
    non-UTF-8 names)."""
    from kvlint.report.safe import uri

    p = path.replace(os.sep, "/")
    if os.path.isabs(p):
        rel = os.path.relpath(p)
        if not rel.startswith(".."):
            p = rel.replace(os.sep, "/")
    return uri(p)


def _fix(fix, file: str) -> dict:
    """A SARIF fix: one artifactChange with a replacement per edit (an empty deletedRegion inserts)."""
    return {
        "description": {"text": f"{fix.message} ({fix.applicability})"},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": _uri(file), "uriBaseId": "%SRCROOT%"},
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": e.where.line,
                            "startColumn": e.where.column,
                            "endLine": e.where.end_line or e.where.line,
                            "endColumn": e.where.end_column or e.where.column,
                        },
                        "insertedContent": {"text": e.text},
                    }
                    for e in fix.edits
                ],
            }
        ],
        "properties": {"applicability": fix.applicability},
    }


def render(run, settings, color: bool = False) -> str:
    from kvlint.rules import all_rules

    rules = list(all_rules())
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for f in [*run.findings, *run.suppressed]:  # suppressed ones carry SARIF `suppressions`
        w = f.where
        region = {"startLine": w.line, "startColumn": w.column}
        if w.end_line:
            region["endLine"] = w.end_line
        if (
            w.end_column
            and (w.end_line or w.line) >= w.line
            and not (w.end_line == w.line and w.end_column <= w.column)
        ):
            region["endColumn"] = w.end_column
        text = f.message + (f" Fix: {f.fix}" if f.fix else "")
        result = {
            "ruleId": f.rule,
            "ruleIndex": index.get(f.rule, 0),
            "level": _LEVEL[f.severity],
            "message": {"text": text},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(w.file), "uriBaseId": "%SRCROOT%"},
                        "region": region,
                    }
                }
            ],
        }
        if f.suppressed_by:
            result["suppressions"] = [{"kind": "inSource", "justification": f.suppressed_by}]
        if f.details:
            result["message"]["markdown"] = text + "\n\n" + "\n".join(f"    {d}" for d in f.details)
        fixes = [_fix(x, w.file) for x in f.fixes if x.edits]
        if fixes:
            result["fixes"] = fixes
        results.append(result)
    doc: dict[str, Any] = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kvlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": DOCS_URL.rsplit("/blob/", 1)[0],
                        "rules": [rule_descriptor(r) for r in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    if settings.overrides:  # the configuration rewrote a catalog fact: said where SARIF says such things
        notes = [
            {"level": "warning", "message": {"text": f"{o.where}: {o.message}"}} for o in settings.overrides
        ]
        doc["runs"][0]["invocations"] = [
            {"executionSuccessful": not run.errors, "toolConfigurationNotifications": notes}
        ]
    from kvlint.report.safe import scrub

    return json.dumps(scrub(doc), indent=2) + "\n"
