"""KV001 invalid-input: a file kvlint cannot read as YAML or as the serving spec, located; never suppressed."""

from __future__ import annotations

from conftest import lint
from rulecase import findings


def test_broken_yaml_is_located():
    (f,) = findings(lint("kind: ServingSpec\nname: [unclosed\nmodel: x\n"), "KV001")
    assert f.where.line >= 2


def test_a_suppression_comment_cannot_hide_it():
    r = lint("# kvlint: disable-file=KV001 -- trying\nkind: ServingSpec\nname: [unclosed\n")
    assert findings(r, "KV001")


def test_a_spec_missing_a_required_key_says_which():
    (f,) = findings(lint("kind: ServingSpec\nname: x\ngpu: H100\n"), "KV001")
    assert "model" in f.message
