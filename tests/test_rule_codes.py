"""Every code the pipeline emits has a rule: a mistyped code would otherwise vanish silently
(IssueRule keeps only issues under its own code)."""

from __future__ import annotations

import ast
import re
import typing

import pytest
from conftest import FIXTURES, ROOT, SHARED

from kvlint import codes
from kvlint.rules import all_rules
from kvlint.rules.base import IssueRule

CODE = re.compile(r"^KV\d{3}$")


def test_issue_codes_are_the_ids_of_issue_rules():
    by_id = {r.id: r for r in all_rules()}
    assert typing.get_args(codes.IssueCode) == codes.ISSUE_CODES
    for code in codes.ISSUE_CODES:
        assert isinstance(by_id.get(code), IssueRule), f"{code} has no issue rule"
    issue_rules = {r.id for r in all_rules() if isinstance(r, IssueRule)}
    assert issue_rules == set(codes.ISSUE_CODES), "an issue rule whose code is not in codes.py"


def test_rule_ids_are_unique_and_well_formed():
    ids = [r.id for r in all_rules()]
    assert len(ids) == len(set(ids))
    assert all(CODE.match(i) for i in ids)


def test_every_code_written_in_the_package_names_a_rule():
    """A code spelled out anywhere in kvlint/ (a rule's own id, a reference in a message or a
    table) must be a registered rule; issue codes outside rules/ come from codes.py."""
    known = {r.id for r in all_rules()}
    unknown, literal_issue_codes = [], []
    for path in sorted((ROOT / "kvlint").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(), rel)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value):
                if node.value not in known:
                    unknown.append(f"{rel}:{node.lineno} {node.value}")
                if node.value in codes.ISSUE_CODES and rel != "kvlint/codes.py":
                    literal_issue_codes.append(f"{rel}:{node.lineno} {node.value}")
    assert not unknown, "codes with no rule: " + ", ".join(unknown)
    assert not literal_issue_codes, "use the kvlint.codes constant: " + ", ".join(literal_issue_codes)


def _inputs() -> list:
    folders = [FIXTURES]
    for name in ("manifests", "manifests2"):
        if (SHARED / "corpus" / name).is_dir():
            folders.append(SHARED / "corpus" / name)
    return sorted(p for f in folders for p in f.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


def test_every_issue_raised_on_real_inputs_has_a_rule(monkeypatch):
    """Lint the fixtures (and the corpus when ../shared is beside the checkout) while recording
    every Issue constructed anywhere in load, extract and resolve."""
    from kvlint.findings import Issue
    from kvlint.run.lint import read_and_lint
    from kvlint.run.settings import Settings

    seen: set[str] = set()
    original = Issue.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.add(self.code)

    monkeypatch.setattr(Issue, "__init__", recording)
    known = {r.id for r in all_rules()}
    emitted: set[str] = set()
    for path in _inputs():
        result = read_and_lint(str(path), Settings())
        if not isinstance(result, str):
            emitted.update(f.rule for f in result.findings)
    assert seen, "no issue was raised at all: the recorder is not wired"
    assert seen <= known, f"issues under codes no rule reports: {sorted(seen - known)}"
    assert emitted <= known
    assert {c for c in seen if c in codes.ISSUE_CODES} <= emitted | {codes.UNUSED_SUPPRESSION}


@pytest.mark.parametrize("code", codes.ISSUE_CODES)
def test_each_issue_rule_reports_its_own_issues_only(code):
    from kvlint.findings import Issue, Location
    from kvlint.rules import get
    from kvlint.rules.base import IssueContext, Thresholds

    rule = get(code)
    assert rule is not None
    where = Location("f.yaml", 3, 1)
    issues = [Issue(c, f"message {c}", where) for c in codes.ISSUE_CODES]
    found = list(rule.check(IssueContext("f.yaml", issues, Thresholds())))
    assert [f.message for f in found] == [f"message {code}"]


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tgi"])
def test_fix_flags_come_from_the_engines_own_option_tables(engine):
    """facts.flag is the reverse of the engine's MAPPING: every flag a fix names is one the
    extractor reads for the same field."""
    from importlib import import_module

    from kvlint.rules.facts import flag

    mapping = import_module(f"kvlint.engines.{engine}.options").MAPPING
    for setting in (
        "max_context",
        "max_sequences",
        "tensor_parallel",
        "kv_cache_dtype",
        "quantization",
        "utilization",
    ):
        spelled = flag(engine, setting)
        assert spelled in mapping, (engine, setting, spelled)
        field = mapping[spelled][0]
        assert field == setting or setting == "utilization", (engine, setting, field)
    assert flag("tgi", "utilization") == "--cuda-memory-fraction"  # an option, not the environment name
