"""One bad file never costs the others (security review F5, second half).

An unexpected exception while linting one file — here forced by a rule that raises on one file —
becomes a located KV001 "internal error" finding for that file, the run exits 2 (even with
--exit-zero), and every other file's findings are still reported in the requested format, with
and without worker processes.
"""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from kvlint.cli import main
from kvlint.rules import get

BAD = FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml"


@pytest.fixture
def exploding_rule(monkeypatch):
    """KV102's check raises on any file whose name contains 'boom' (a stand-in for a kvlint bug)."""
    rule = get("KV102")
    original = type(rule).check

    def check(self, ctx):
        if "boom" in ctx.file:
            raise RuntimeError("simulated bug\n::error::not a command")
        return original(self, ctx)

    monkeypatch.setattr(type(rule), "check", check)


def _files(tmp_path, n_good: int) -> list[str]:
    paths = []
    for i in range(n_good):
        p = tmp_path / f"ok{i:02d}.yaml"
        shutil.copy(BAD, p)
        paths.append(str(p))
    boom = tmp_path / "boom.yaml"
    shutil.copy(BAD, boom)
    return [*paths, str(boom)]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "markdown", "concise"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_internal_error_is_a_kv001_for_that_file_only(tmp_path, exploding_rule, fmt, jobs, force_workers):
    n = 2 if jobs == "1" else 40  # with force_workers, 40 files go to the pool (warm files, then chunks)
    files = _files(tmp_path, n)
    out = tmp_path / f"report.{fmt}"
    r = CliRunner().invoke(
        main,
        ["--isolated", "--no-color", "--exit-zero", "--jobs", jobs, "--format", fmt, "-o", str(out), *files],
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2, r.output
    text = out.read_text()
    assert text.count("KV102") >= n  # every other file's real finding is in the report
    assert "internal error while linting this file (RuntimeError" in text
    assert "boom.yaml" in text
    if fmt == "json":
        doc = json.loads(text)
        boom = [f for f in doc["findings"] if f["file"].endswith("boom.yaml")]
        assert [(f["rule"], f["line"], f["severity"]) for f in boom] == [("KV001", 1, "error")]
    if fmt == "github":
        assert all(line.startswith("::") for line in text.splitlines())
        assert "\n::error::not a command" not in text


def test_internal_error_in_stdin_input(exploding_rule):
    r = CliRunner().invoke(
        main,
        ["--isolated", "--format", "concise", "--stdin-filename", "boom.yaml", "-"],
        input=BAD.read_text(),
    )
    assert r.exit_code == 2
    assert "boom.yaml:1:1: error KV001 internal error" in r.stdout
