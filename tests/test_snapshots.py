"""Every fixture's whole output, pinned: fixtures/<dir>/<name>.snap holds what a user sees from
`kvlint --isolated FIXTURE` (text), `--format json`, `--diff` and `--unsafe-fixes --diff` — exit code,
stdout and stderr of each — as ruff's insta snapshots pin a rule's rendered diagnostics.

`KVLINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_snapshots.py` rewrites the snapshots (and
deletes those whose fixture is gone); review `git diff fixtures/` before committing. Without it a
changed, missing or orphaned snapshot fails. The runs are in-process (click's CliRunner on the
`kvlint` command) from the checkout's root, so the report names fixtures as a user there would;
the only normalisation is the checkout's absolute path, which no fixture's output should need.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, ROOT

from kvlint.cli import main
from kvlint.run.discover import SUFFIXES

UPDATE = bool(os.environ.get("KVLINT_UPDATE_SNAPSHOTS"))
COMMAND = "KVLINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_snapshots.py"
RUNS = ([], ["--format", "json"], ["--diff"], ["--unsafe-fixes", "--diff"])
# What would make a run read the machine rather than the fixture: CI and colour switches, the
# report format GitHub Actions picks, models pulled or cached outside the checkout.
ENVIRONMENT = (
    "GITHUB_ACTIONS",
    "NO_COLOR",
    "FORCE_COLOR",
    "CI",
    "XDG_CACHE_HOME",
    "HF_HUB_OFFLINE",
    "HF_ENDPOINT",
)

FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def snapshot_of(fixture: Path) -> Path:
    return fixture.with_suffix(".snap")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _section(args: list[str], result) -> str:
    head = f"=== kvlint {' '.join(args)}  (exit {result.exit_code})\n"
    parts = [head]
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        if text:
            parts.append(f"--- {name}\n{text}" + ("" if text.endswith("\n") else "\n[no newline at end]\n"))
    if len(parts) == 1:
        parts.append("(no output)\n")
    return "".join(parts)


def render(fixture: Path) -> str:
    """The snapshot text for `fixture`: each run of RUNS as the user would type it."""
    rel = _rel(fixture)
    out = [f"kvlint snapshot of {rel}; {COMMAND} rewrites it\n"]
    runner = CliRunner()
    for extra in RUNS:
        args = ["--isolated", *extra, rel]
        result = runner.invoke(main, args, catch_exceptions=False)
        out.append("\n" + _section(args, result))
    text = "".join(out)
    for root in {str(ROOT), ROOT.as_posix()}:
        text = text.replace(root, "<ROOT>")
    return text


@pytest.fixture
def user_shell(monkeypatch, tmp_path):
    """The checkout's root as the working directory, and nothing from the machine's environment."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KVLINT_MODELS_DIR", str(tmp_path / "no-pulled-models"))
    monkeypatch.setenv("COLUMNS", "80")  # nothing reads the width today; a future wrap would not vary
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=_rel)
def test_output_matches_snapshot(fixture, user_shell):
    snap = snapshot_of(fixture)
    actual = render(fixture)
    if UPDATE:
        if not snap.exists() or snap.read_text(encoding="utf-8") != actual:
            snap.write_text(actual, encoding="utf-8", newline="\n")
        return
    assert snap.exists(), f"{_rel(snap)} is missing: {COMMAND} writes it (review it, commit it)"
    expected = snap.read_text(encoding="utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True), _rel(snap), "actual output"
        )
        pytest.fail(
            f"{_rel(fixture)}'s output changed. If the change is meant: {COMMAND}, then review "
            f"git diff {_rel(snap)}\n" + "".join(list(diff)[:200]),
            pytrace=False,
        )


def test_every_snapshot_has_its_fixture():
    fixtures = {snapshot_of(f) for f in FIXTURE_FILES}
    orphans = sorted(p for p in FIXTURES.rglob("*.snap") if p not in fixtures)
    if UPDATE:
        for p in orphans:
            p.unlink()
        return
    assert not orphans, (
        f"snapshots without a fixture (renamed or deleted?): {[_rel(p) for p in orphans]}; {COMMAND}"
    )


def test_fixture_names_map_to_distinct_snapshots():
    """x.yaml and x.json beside each other would share x.snap."""
    assert len({snapshot_of(f) for f in FIXTURE_FILES}) == len(FIXTURE_FILES)
