"""Helpers for the per-rule test modules (tests/rules/test_kvNNN.py): lint a ServingSpec written
as keyword arguments and read back the codes, the findings of one rule and the plan."""

from __future__ import annotations

from conftest import lint

from kvlint.capacity.plan import Plan
from kvlint.findings import Finding
from kvlint.rules.base import Thresholds
from kvlint.run.lint import FileResult


def spec_text(**fields: object) -> str:
    lines = ["kind: ServingSpec", "name: case"]
    for key, value in fields.items():
        if isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {k}: {v}" for k, v in value.items()]
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n"


def run(thresholds: Thresholds | None = None, **fields: object) -> FileResult:
    kwargs = {"thresholds": thresholds} if thresholds is not None else {}
    return lint(spec_text(**fields), **kwargs)


def findings(result: FileResult, code: str) -> list[Finding]:
    return [f for f in result.findings if f.rule == code]


def plan(result: FileResult) -> Plan:
    (r,) = result.deployments
    assert r.plan is not None, [f.message for f in result.findings]
    return r.plan
