"""KV006 unused-suppression: a suppression that covers nothing, or names no rule."""

from __future__ import annotations

from conftest import lint
from rulecase import findings

SPEC = "kind: ServingSpec\nname: x\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\n"


def test_a_used_suppression_is_silent_and_an_unused_one_is_reported():
    used = lint(SPEC + "max_context: 131072  # kvlint: disable=KV102 -- planned\nmax_sequences: 1\n")
    assert not findings(used, "KV102") and not findings(used, "KV006")
    unused = lint(SPEC + "max_context: 4096  # kvlint: disable=KV102 -- planned\nmax_sequences: 1\n")
    (f,) = findings(unused, "KV006")
    assert "matches no finding" in f.message and f.where.line == 5


def test_an_unknown_rule_name_is_reported():
    r = lint(SPEC + "max_context: 4096  # kvlint: disable=KV999 -- typo\n")
    (f,) = findings(r, "KV006")
    assert "KV999" in f.message
