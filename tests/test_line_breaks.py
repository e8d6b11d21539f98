"""What a line is, everywhere kvlint reports one (kvlint/load/source.py).

A line ends at LF, CRLF or CR only (YAML 1.2's breaks; what editors, git, GitHub annotations and
SARIF viewers count). ruamel.yaml's marks also end lines at NEL (U+0085), LS (U+2028) and PS
(U+2029); \\v and \\f end lines for str.splitlines. None of these may move a finding, the source
excerpt under it, a fix's edit, or a position found while decoding (NUL byte, bad UTF-8, merge
conflict marker) off the physical line it is on.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, lint

from kvlint.cli import main
from kvlint.fix.apply import apply_fixes

BREAKS = {"NEL": "\x85", "LS": "\u2028", "PS": "\u2029"}  # line breaks to ruamel.yaml (YAML 1.1)
CONTROLS = {"VT": "\x0b", "FF": "\x0c"}  # line breaks to str.splitlines; YAML refuses them
ODD = {**BREAKS, **CONTROLS}
PHYSICAL = re.compile("\r\n|[\n\r]")
SPEC = (FIXTURES / "KV102" / "fix-unsafe-spec.yaml").read_text()


def _with(ch: str) -> str:
    """The KV102 spec with the odd character twice in a quoted string before the finding's line."""
    return SPEC.replace("name: llama-8b-l4-long", f'name: "llama{ch}8b{ch}l4"')


def _value_position(text: str) -> tuple[int, int]:
    lines = PHYSICAL.split(text)
    n = next(i for i, line in enumerate(lines) if "max_context:" in line)
    return n + 1, lines[n].index("131072") + 1


@pytest.mark.parametrize("name", BREAKS)
def test_findings_and_fix_edits_are_on_physical_lines(name):
    text = _with(ODD[name])
    r = lint(text)
    kv102 = next(f for f in r.findings if f.rule == "KV102")
    assert (kv102.where.line, kv102.where.column) == _value_position(text)
    assert r.lines[kv102.where.line] == "max_context: 131072"  # the excerpt under the finding
    assert len(r.lines) == len([n for n in r.lines if n <= len(PHYSICAL.split(text))])
    fix = next(x for x in kv102.fixes if x.edits)
    assert {e.where.line for e in fix.edits} == {kv102.where.line}
    after, applied = apply_fixes(text, [fix])
    assert applied == [fix]
    assert after.replace(ODD[name], "") == _with("").replace("131072", "36768")


@pytest.mark.parametrize("name", BREAKS)
def test_same_physical_line_after_a_yaml_break(name):
    ch = ODD[name]
    # to the parser, `max_context` starts a line of its own; to an editor it is on the label's
    text = SPEC.replace("name: llama-8b-l4-long\n", "")
    text = text.replace("max_context: 131072", f'name: "a{ch}b"{ch}max_context: 131072')
    r = lint(text)
    kv102 = next(f for f in r.findings if f.rule == "KV102")
    assert (kv102.where.line, kv102.where.column) == _value_position(text)
    lines = PHYSICAL.split(text)
    for f in r.findings:
        assert 1 <= f.where.line <= len(lines) and f.where.column <= len(lines[f.where.line - 1]) + 1, f


@pytest.mark.parametrize("name", ODD)
@pytest.mark.parametrize(
    "tail, message",
    [(b"\x00", "NUL byte"), (b"\xff", "not UTF-8"), (b"\n<<<<<<< HEAD\n", "merge-conflict")],
)
def test_positions_found_while_decoding_are_physical(name, tail, message):
    head = f'a: "x{ODD[name]}y{ODD[name]}"\nb: z'.encode()
    data = head + tail
    from kvlint.run.lint import lint_text
    from kvlint.run.settings import Settings

    r = lint_text(data, "x.yaml", Settings(), ".")
    f = next(f for f in r.findings if message in f.message)
    text = data.decode("utf-8", "replace")
    lines = PHYSICAL.split(text)
    if message == "merge-conflict":
        assert (f.where.line, f.where.column) == (3, 1)
    else:
        assert (f.where.line, f.where.column) == (2, 5), f
    assert f.where.line <= len(lines)


@pytest.mark.parametrize("name", CONTROLS)
def test_a_control_character_is_a_located_error_on_its_physical_line(name):
    text = f'a: 1\n\x85b: "x{CONTROLS[name]}y"\nc: 2\n'  # \x85 is 2 bytes: libyaml counts bytes
    r = lint(text)
    (f,) = r.findings
    assert f.rule == "KV001" and "control characters" in f.message
    assert (f.where.line, f.where.column) == (2, 7)
    assert r.lines[2] == f'\x85b: "x{CONTROLS[name]}y"'


def test_cli_fix_and_every_format_agree_on_the_line():
    text = _with("\u2028").replace("max_sequences: 1", "max_sequences: 1 # one\x85")
    data = text.encode()
    line, column = _value_position(text)
    run = CliRunner().invoke(main, ["--isolated", "--format", "json", "-"], input=data)
    doc = json.loads(run.stdout)
    kv102 = next(f for f in doc["findings"] if f["rule"] == "KV102")
    assert (kv102["line"], kv102["column"]) == (line, column)
    edits = [e for x in kv102["fixes"] for e in x["edits"]]
    assert edits and all(e["line"] == line for e in edits)
    sarif = json.loads(CliRunner().invoke(main, ["--isolated", "--format", "sarif", "-"], input=data).stdout)
    res = next(x for x in sarif["runs"][0]["results"] if x["ruleId"] == "KV102")
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == line
    gh = CliRunner().invoke(main, ["--isolated", "--format", "github", "-"], input=data).stdout
    assert f"line={line}," in next(g for g in gh.splitlines() if "KV102" in g)
    out = CliRunner().invoke(main, ["--isolated", "--unsafe-fixes", "--exit-zero", "-"], input=data)
    assert out.stdout.encode() == data.replace(b"131072", b"36768")
