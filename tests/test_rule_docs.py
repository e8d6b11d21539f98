"""rules/*.md: one page per rule, generated from the rule's docstring and its fixtures.

`KVLINT_WRITE_DOCS=1 pytest tests/test_rule_docs.py` rewrites the pages after a docstring or a
fixture changes; without it, this test fails when a page is stale.
"""

import os
import re

import pytest
from conftest import ROOT

from kvlint.rules import all_rules
from kvlint.run.lint import lint_text
from kvlint.run.ruledocs import page_with_examples
from kvlint.run.settings import Settings

PAGES = ROOT / "rules"
RULES = all_rules()


def test_pages_and_registry_match_one_to_one():
    pages = {p.stem for p in PAGES.glob("*.md") if p.stem != "README"}
    assert pages == {r.id for r in RULES}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_docstring_has_the_sections(rule):
    doc = type(rule).__doc__
    for section in ("## What it does", "## Why is this bad?", "## How to fix", "## Suppress"):
        assert section in doc, (rule.id, section)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_page_is_generated_from_docstring_and_fixtures(rule):
    page = PAGES / f"{rule.id}.md"
    expected = page_with_examples(rule, ROOT)
    if os.environ.get("KVLINT_WRITE_DOCS"):
        page.write_text(expected, encoding="utf-8")
    assert page.read_text(encoding="utf-8") == expected, (
        f"{page} is stale: KVLINT_WRITE_DOCS=1 pytest {__file__}"
    )


def _examples(page: str, heading: str) -> list[tuple[str, str]]:
    section = page.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"`(fixtures/[^`]+)`:\n\n```yaml\n(.*?)\n```", section, flags=re.S)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_page_examples_trigger_exactly_the_rule(rule):
    page = (PAGES / f"{rule.id}.md").read_text(encoding="utf-8")
    bad = _examples(page, "## Failing example")
    good = _examples(page, "## Passing example")
    assert bad and good
    for rel, text in bad:
        result = lint_text(text.encode(), rel, Settings(), str((ROOT / rel).parent))
        assert {f.rule for f in result.findings} == {rule.id}, rel
    for rel, text in good:
        result = lint_text(text.encode(), rel, Settings(), str((ROOT / rel).parent))
        assert result.findings == [], rel
