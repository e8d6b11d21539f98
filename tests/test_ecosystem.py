"""benchmarks/ecosystem.py: findings of two runs over the same inputs, paired by place, sorted into
added / removed / changed, and plans that moved; the report groups them by rule and file."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import ecosystem  # noqa: E402


def _f(rule="KV102", file="a.yaml", line=3, column=5, message="m", severity="error", details=(), fix=None):
    return {"rule": rule, "file": file, "line": line, "column": column, "message": message,
            "severity": severity, "details": list(details), "fix": fix}  # fmt: skip


def _report(*findings, plans=()):
    deps = [{"file": f, "line": ln, "name": n, "plan": p} for f, ln, n, p in plans]
    return {"findings": list(findings), "deployments": deps}


def test_identical_runs_change_nothing():
    r = _report(_f(), _f(rule="KV004", severity="info"), plans=[("a.yaml", 1, "x", {"kv_cache_tokens": 10})])
    diff = ecosystem.compare(r, r)
    assert diff == {"added": [], "removed": [], "changed": [], "plans": []}
    assert "no finding and no plan changed" in ecosystem.render(diff, "HEAD", 1)


def test_findings_are_paired_by_place_and_sorted_by_what_moved():
    before = _report(_f(), _f(rule="KV103", line=9), _f(rule="KV201", file="b.yaml", details=("x 0.9",)))
    after = _report(
        _f(message="m2"),  # same place, new message: changed
        _f(rule="KV201", file="b.yaml", details=("x 0.9 (vLLM default)",)),  # arithmetic changed
        _f(rule="KV004", line=1, severity="info"),  # new
    )
    diff = ecosystem.compare(before, after)
    assert [f["rule"] for f in diff["added"]] == ["KV004"]
    assert [f["rule"] for f in diff["removed"]] == ["KV103"]
    assert sorted(p["after"]["rule"] for p in diff["changed"]) == ["KV102", "KV201"]
    text = ecosystem.render(diff, "abc123", 2)
    assert "KV102: +0 -0 ~1" in text and "KV103: +0 -1 ~0" in text and "KV004: +1 -0 ~0" in text
    assert "was: m" in text and "details from line 1: ['x 0.9'] -> ['x 0.9 (vLLM default)']" in text


def test_a_duplicate_finding_at_one_place_counts_once_each():
    before = _report(_f(), _f())
    after = _report(_f())
    diff = ecosystem.compare(before, after)
    assert len(diff["removed"]) == 1 and not diff["added"] and not diff["changed"]


def test_plans_that_moved_are_listed():
    before = _report(plans=[("a.yaml", 1, "x", {"kv_cache_tokens": 10}), ("a.yaml", 9, "y", None)])
    after = _report(plans=[("a.yaml", 1, "x", {"kv_cache_tokens": 12}), ("a.yaml", 9, "y", None)])
    diff = ecosystem.compare(before, after)
    assert [p["deployment"] for p in diff["plans"]] == [["a.yaml", 1, "x"]]
    assert "plans moved: 1" in ecosystem.render(diff, "HEAD", 1)
