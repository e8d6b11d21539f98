"""What kvlint prints about paths and configuration text (security review F29, F15/F16 for `kvlint config`).

- F29: no absolute path of the runner (its home, its checkout's location) in a finding or a
  diagnostic: paths are shown relative to the working directory, or as the user wrote them.
- `kvlint config` neutralises every string from the configuration exactly as the lint report
  does: control characters, ANSI escapes, lone surrogates and line breaks are escaped, and no
  line starts with `::` (a GitHub workflow command).
"""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from kvlint.cli import main
from kvlint.fileio import shown
from kvlint.run.lint import lint_text
from kvlint.run.settings import Settings


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The review's layout: a manifest naming `./secret` (an unreadable model directory) and
    `./models/x.json`, linted from the directory above, with the runner's home set to tmp_path."""
    disc = tmp_path / "disc2"
    (disc / "secret").mkdir(parents=True)
    (disc / "secret" / "config.json").write_text("{")
    (disc / "models").mkdir()
    (disc / "models" / "x.json").write_text('{"a":')
    for name, model in (("a.yaml", "./secret"), ("b.yaml", "./models/x.json")):
        (disc / name).write_text(f"kind: ServingSpec\nmodel: {model}\ngpu: L4\nmax_context: 4096\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("fmt", ["concise", "json", "sarif", "github", "markdown"])
def test_f29_kv003_names_the_model_path_relative_not_absolute(scratch, fmt):
    out = run("--isolated", "--format", fmt, "disc2/a.yaml", "disc2/b.yaml").stdout
    assert str(scratch) not in out and os.path.realpath(scratch) not in out
    if fmt == "concise":
        assert "could not read disc2/secret:" in out and "could not read disc2/models/x.json:" in out


def test_f29_an_absolute_argument_inside_the_working_directory_is_shown_relative(scratch):
    out = run("--isolated", "--format", "json", str(scratch / "disc2" / "a.yaml")).stdout
    assert str(scratch) not in out
    (f,) = [f for f in json.loads(out)["findings"] if f["rule"] == "KV003"]
    assert f["file"] == "disc2/a.yaml" and "disc2/secret" in f["message"]


def test_f29_diagnostics_name_the_gitignore_and_config_relative(scratch):
    os.symlink("/dev/zero", scratch / ".gitignore")
    r = CliRunner().invoke(main, ["--isolated", "disc2/a.yaml"])
    assert "kvlint: .gitignore: not read (not a regular file)" in r.stderr and str(scratch) not in r.stderr
    (scratch / "disc2" / ".kvlint.yaml").write_text("fail-on: [bogus\n")
    os.chdir(scratch / "disc2")
    r = CliRunner().invoke(main, ["a.yaml"])
    assert r.exit_code == 2 and ".kvlint.yaml:" in r.stderr and str(scratch) not in r.stderr


def test_shown_paths():
    home = os.path.expanduser("~")
    assert shown(os.path.join(os.getcwd(), "a", "b.yaml")) == os.path.join("a", "b.yaml")
    assert shown(os.path.join(home, ".cache", "x")) in (
        os.path.join("~", ".cache", "x"),
        os.path.join(".cache", "x"),
    )
    assert shown("/definitely/elsewhere/x.json") == "/definitely/elsewhere/x.json"  # as the user wrote it


def test_f29_positions_of_binary_and_undecodable_bytes_are_physical_lines():
    """A NUL or a bad byte after U+2028/NEL is on the line editors and GitHub show (found by the
    fuzz campaign: line 2 of a 1-line file)."""
    for data, line in (
        (b"a\xc2\x85\x00", 1),
        ("a\u2028b\x00".encode(), 1),
        (b"a\r\n\x00", 2),
        (b"x\xe2\x80\xa8\xff", 1),
    ):
        (f,) = lint_text(data, "f.yaml", Settings()).findings
        assert f.rule == "KV001" and f.where.line == line, (data, f)


# ---- kvlint config ------------------------------------------------------------------------------

HOSTILE = "x\x1b]0;PWNED\x07\x1b[2J\x1b[1;32mALL CHECKS PASSED\x1b[0m\n::error file=README.md,line=1::INJECTED\ud800"


def _hostile_config(tmp_path) -> None:
    """Every free-text setting kvlint config prints, each carrying the hostile string."""
    quoted = json.dumps(HOSTILE)  # JSON is YAML: the escapes (\u001b, \n, \ud800) reach the value
    (tmp_path / ".kvlint.yaml").write_text(
        f"gpu: {quoted}\nengine-version: {quoted}\nexclude: [{quoted}]\n"
        f"per-file-ignores: {{{quoted}: [KV103]}}\n"
        f"gpus: [{{id: {quoted}, memory: 40GiB}}, {{id: l4, memory: 1GiB}}]\n"
    )


def _neutral(out: str) -> None:
    assert "\x1b" not in out and "\x07" not in out and "\ud800" not in out
    assert not any(line.lstrip().startswith("::") for line in out.splitlines()), out
    assert "\\x1b]0;PWNED" in out and "\\n::error" in out  # shown escaped, not dropped


def test_kvlint_config_neutralises_configuration_text_like_the_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _hostile_config(tmp_path)
    r = run("config")
    assert r.exit_code == 0
    _neutral(r.stdout)
    assert "gpu                  x\\x1b]0;PWNED\\x07" in r.stdout
    assert re.search(r"^  \.kvlint\.yaml:5:\d+: gpus: 'l4' replaces", r.stdout, re.M)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    _neutral(run("config").stdout)


def test_kvlint_config_names_a_hostile_config_file_safely(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = ":\x1b[2J:error::x.yaml"
    (tmp_path / name).write_text("fail-on: warning\n")
    out = run("config", "--config", name).stdout
    assert "\x1b" not in out and not any(line.startswith("::") for line in out.splitlines())
    assert "fail-on              warning" in out


def test_report_and_config_escape_the_same_way(tmp_path, monkeypatch):
    """The lint report's note about a replaced catalog entry and `kvlint config` print the same text."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.yaml").write_text((FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text())
    _hostile_config(tmp_path)
    report = run("d.yaml").stdout
    note = next(line for line in report.splitlines() if line.startswith("kvlint: note: "))
    assert note.removeprefix("kvlint: note: ") in run("config").stdout
