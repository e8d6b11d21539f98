"""The text report lists errors and warnings and counts infos by reason in one block; --show-infos
(or `show-infos: true`) lists them; JSON and SARIF carry every finding whatever is asked."""

from __future__ import annotations

import json
import re
from collections import Counter

from click.testing import CliRunner
from conftest import FIXTURES, ROOT

from kvlint.cli import main

FIXTURE_DIR = str(FIXTURES.relative_to(ROOT))  # 48 infos of ten rules and six kinds at the time of writing
COUNTED = re.compile(r"^  +(\d+) (KV\d{3}) (.+)$")
LISTED = re.compile(r"^(.+?):(\d+):(\d+): (error|warning|info) (KV\d{3}) [\w-]+: (.*)$")


def run(*args: str):
    return CliRunner().invoke(main, ["--isolated", *args], catch_exceptions=False)


def _json_findings(*args: str) -> list[dict]:
    return json.loads(run("--format", "json", *args).output)["findings"]


def _listed(text: str) -> list[tuple]:
    return [m.groups() for m in map(LISTED.match, text.splitlines()) if m]


def _key(f: dict) -> tuple:
    return (f["file"], str(f["line"]), str(f["column"]), f["severity"], f["rule"], f["message"])


def _in_process(paths: list[str]):
    from kvlint.app import _discover, _lint_files
    from kvlint.entry import DEFAULTS
    from kvlint.run.flags import build_settings
    from kvlint.run.lint import RunResult

    settings, _ = build_settings({**DEFAULTS, "isolated": True})
    assert settings is not None
    result = RunResult()
    _lint_files(result, _discover(result, tuple(paths), settings), settings, 1, keep=False)
    return result.findings


def test_text_lists_no_info_and_counts_them_as_the_json_has_them(monkeypatch):
    monkeypatch.chdir(ROOT)
    findings = _json_findings(FIXTURE_DIR)
    infos = [f for f in findings if f["severity"] == "info"]
    assert len(infos) >= 20 and len({f["rule"] for f in infos}) >= 5  # a run with many infos of many rules
    text = run(FIXTURE_DIR).output
    listed = _listed(text)
    assert all(row[3] != "info" for row in listed)
    assert sorted(listed) == sorted(_key(f) for f in findings if f["severity"] != "info")
    counted = [m.groups() for m in map(COUNTED.match, text.splitlines()) if m]
    per_rule: Counter[str] = Counter()
    for n, rule, _ in counted:
        per_rule[rule] += int(n)
    assert per_rule == Counter(f["rule"] for f in infos)
    assert f"{len(infos)} infos by reason" in text
    assert f"{len(infos)} infos)" in text.splitlines()[-1]  # the closing count still includes them


def test_each_reason_line_counts_the_infos_of_that_rule_and_kind(monkeypatch):
    from kvlint.report import infos

    monkeypatch.chdir(ROOT)
    findings = _in_process([FIXTURE_DIR])
    by_reason = Counter(
        (f.rule, infos._text(f.rule, f.kind, f.device)) for f in findings if f.severity.label == "info"
    )
    assert len(by_reason) >= 8  # several reasons: the GPU not stated, an engine not modelled, a template …
    text = run(FIXTURE_DIR).output
    lines = text.splitlines()
    printed = {}
    for i, line in enumerate(lines):
        m = COUNTED.match(line)
        if m:
            n, rule, what = m.groups()
            todo = lines[i + 1].split("-> ", 1)[1] if "-> " in lines[i + 1] else ""
            printed[(rule, what + (" — " + todo if todo else ""))] = int(n)
    assert printed == dict(by_reason)
    # the in-process infos are the JSON's infos, one for one
    json_infos = sorted(_key(f) for f in _json_findings(FIXTURE_DIR) if f["severity"] == "info")
    own = sorted(
        (f.where.file, str(f.where.line), str(f.where.column), "info", f.rule, f.message)
        for f in findings
        if f.severity.label == "info"
    )
    assert own == json_infos


def test_show_infos_lists_exactly_the_json_findings(monkeypatch):
    monkeypatch.chdir(ROOT)
    findings = _json_findings(FIXTURE_DIR)
    text = run("--show-infos", FIXTURE_DIR).output
    assert sorted(_listed(text)) == sorted(_key(f) for f in findings)
    assert "by reason" not in text


def test_show_infos_from_the_configuration(tmp_path, monkeypatch):
    fixture = FIXTURES / "KV007" / next(p.name for p in (FIXTURES / "KV007").iterdir() if p.suffix == ".yaml")
    (tmp_path / "deploy.yaml").write_bytes(fixture.read_bytes())
    monkeypatch.chdir(tmp_path)
    plain = CliRunner().invoke(main, ["deploy.yaml"]).output
    assert "by reason" in plain and not any(row[3] == "info" for row in _listed(plain))
    (tmp_path / ".kvlint.yaml").write_text("show-infos: true\n")
    shown = CliRunner().invoke(main, ["deploy.yaml"]).output
    assert any(row[3] == "info" for row in _listed(shown)) and "by reason" not in shown
    config = CliRunner().invoke(main, ["config"]).output
    assert re.search(r"^show-infos\s+true\s+\(.*\.kvlint\.yaml\)$", config, re.M), config


def test_json_sarif_and_exit_codes_do_not_depend_on_show_infos(monkeypatch):
    monkeypatch.chdir(ROOT)
    for fmt in ("json", "sarif"):
        assert (
            run("--format", fmt, FIXTURE_DIR).output
            == run("--format", fmt, "--show-infos", FIXTURE_DIR).output
        )
    for extra in ([], ["--fail-on", "info"], ["--fail-on", "warning"]):
        assert run(*extra, FIXTURE_DIR).exit_code == run(*extra, "--show-infos", FIXTURE_DIR).exit_code


def test_no_block_without_infos(monkeypatch):
    monkeypatch.chdir(ROOT)
    clean = next(
        str(p.relative_to(ROOT))
        for p in sorted(FIXTURES.rglob("good*.yaml"))
        if not _json_findings(str(p.relative_to(ROOT)))
    )
    out = run(clean).output
    assert "by reason" not in out and out.strip().endswith("no problems found")
