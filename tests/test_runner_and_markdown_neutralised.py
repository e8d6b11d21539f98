"""Output neutralised for the parser that reads it (security review 3, S11-S13). The GitHub runner
trims leading whitespace (NBSP and U+3000 too) before it looks for `::cmd`, and finds the older
`##[cmd]` anywhere in a line; GitHub's Markdown turns URLs into links, `@name` into a mention and
`#1` into a cross-reference."""

from __future__ import annotations

import os
import re

import pytest
from test_output_safety import BAD, FORMATS, cli, pod

from kvlint.report import safe

# any line that the runner would read as a command once it has trimmed the start (TryParseV2)
V2 = re.compile(r"^\s*::")
OWN = re.compile(r"^::(error|warning|notice) (file=|title=kvlint)")


def runner_commands(text: str, github: bool = False) -> list[str]:
    """The lines of `text` the runner would act on: a v2 command after whitespace, or `##[` anywhere
    (kvlint's own annotations in the github format excepted)."""
    lines = text.split("\n")
    return [
        line for line in lines if ("##[" in line) or (V2.match(line) and not (github and OWN.match(line)))
    ]


S11_NAMES = [" ::error file=README.md,line=1::INJECTED.yaml", "\u3000::warning file=README.md::U3000.yaml"]


@pytest.mark.parametrize("fmt", ["text", "concise"])
@pytest.mark.parametrize("name", S11_NAMES, ids=["space", "ideographic-space"])
def test_s11_file_names_never_start_a_line_with_a_command_after_whitespace(tmp_path, monkeypatch, fmt, name):
    """S11: text/concise began a line with ` ::error file=README.md…`, which the runner trims to an
    annotation on a file the PR never touched."""
    (tmp_path / name).write_bytes(BAD.read_bytes())
    monkeypatch.chdir(tmp_path)
    r = cli("--format", fmt, ".", env={"GITHUB_ACTIONS": "true"})
    assert r.exit_code == 1, r.output
    assert "INJECTED" in r.stdout or "U3000" in r.stdout  # reported, under its (escaped) name
    assert runner_commands(r.stdout) == [] and runner_commands(r.stderr) == [], r.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_s12_v1_commands_are_escaped_in_every_format_and_on_stderr(tmp_path, fmt):
    """S12: `##[error …]` in metadata.name, `##[add-mask]` in an argument, and a broken symlink
    named `##[error …]INJECTED.yaml`: stderr carried `./##[error file=README.md;line=4]…` and the
    text report `##[add-mask]SECRETMASK`."""
    case = tmp_path / "s12_v1_command.yaml"
    case.write_text(pod("x##[error file=README.md;line=3]INJECTED-NAME", ["--bogus##[add-mask]SECRETMASK"]))
    os.symlink("/nonexistent", tmp_path / "##[error file=README.md;line=4]INJECTED.yaml")
    r = cli("--format", fmt, str(tmp_path), str(BAD), env={"GITHUB_ACTIONS": "true"})
    assert r.exit_code == 2, r.output  # the broken link is a read error
    assert "INJECTED" in r.stderr and "SECRETMASK" in r.stdout  # reported, escaped
    assert runner_commands(r.stdout, github=fmt == "github") == [], r.stdout
    assert runner_commands(r.stderr) == [], r.stderr
    if fmt in ("json", "sarif", "rdjson"):
        import json

        assert "--bogus##[add-mask]SECRETMASK" in json.dumps(json.loads(r.stdout))  # same data


def test_s13_markdown_breaks_autolinks_mentions_and_references(tmp_path):
    """S13: a `metadata.name` with a URL, a www. host, a team mention and an issue reference went
    through safe.markdown unchanged: live links, notifications and cross-references in a PR comment."""
    name = "https://evil.example/login www.evil.example @octo-org/security-team #1 GH-2 mailto:a@b.example"
    case = tmp_path / "s13_markdown.yaml"
    case.write_text(pod(name))
    r = cli("--format", "markdown", str(case))
    assert "KV005" in r.stdout, r.output
    out = r.stdout.replace("\\", "")
    assert "evil.example/login" in out and "security-team" in out  # still shown
    for live in ("https://", "www.evil", "@octo-org", "#1", "GH-2", "mailto:", "@b.example"):
        assert live not in out, live


def test_runner_lines_is_inert_and_idempotent():
    text = " ::error::a\n\u00a0::warning::b\nx ##[add-mask]c\n::notice::d\nok: :: fine"
    once = safe.runner_lines(text)
    assert runner_commands(once) == [] and safe.runner_lines(once) == once
    assert once.split("\n")[-1] == "ok: :: fine"  # `::` inside a line is nothing to the runner
    assert safe.runner_lines("plain text") == "plain text"
