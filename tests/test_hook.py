"""F1, F30: every file argument pre-commit passes to the hook is a path, whatever its name.

The hook's argv is built exactly as pre-commit builds it: the entry of .pre-commit-hooks.yaml,
split like a shell word list, then the hook's `args:`, then the staged file names."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

BIN = Path(sys.executable).parent
GOOD = FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml"
BAD = FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml"


def _hook_definition() -> dict:
    from ruamel.yaml import YAML

    (hook,) = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return hook


def _run_hook(cwd: Path, args: list[str], files: list[str]) -> subprocess.CompletedProcess:
    entry = shlex.split(_hook_definition()["entry"])
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [*entry, *args, *files], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _hostile_repo(tmp_path: Path) -> tuple[Path, Path]:
    """The review's reproducer: files named like --output=… inside and outside the repository."""
    repo = tmp_path / "pc"
    outside = tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    shutil.copy(GOOD, repo / "--output=victim.yaml")
    (repo / "victim.yaml").write_text("important: true\n")
    deep = repo / f"--output={outside}"
    deep.mkdir(parents=True)
    shutil.copy(GOOD, deep / "OUTSIDE-victim.yaml")
    (outside / "OUTSIDE-victim.yaml").write_text("precious: 1\n")
    shutil.copy(BAD, repo / "with space.yaml")
    shutil.copy(GOOD, repo / "-x.yaml")
    shutil.copy(GOOD, repo / "--config=x.yaml")
    return repo, outside


def _files(repo: Path) -> list[str]:
    return sorted(str(p.relative_to(repo)) for p in repo.rglob("*.yaml") if p.name != "victim.yaml")


def test_hook_definition_uses_the_path_only_entry_and_lints_json():
    hook = _hook_definition()
    assert shlex.split(hook["entry"])[0] == "kvlint-hook"
    assert set(hook["types_or"]) == {"yaml", "json"}  # F30: JSON manifests are linted too


@pytest.mark.parametrize("args", [[], ["--fail-on=warning"], ["--fail-on", "warning", "--strict"]])
def test_file_names_that_look_like_options_are_linted_not_obeyed(tmp_path, args):
    repo, outside = _hostile_repo(tmp_path)
    files = _files(repo)
    result = _run_hook(repo, args, files)
    assert (repo / "victim.yaml").read_text() == "important: true\n"
    assert (outside / "OUTSIDE-victim.yaml").read_text() == "precious: 1\n"
    assert result.returncode == 1, result.stderr  # the KV102 in "with space.yaml", nothing else
    assert "with space.yaml:6:14: error KV102" in result.stdout
    assert "No such option" not in result.stderr and "Traceback" not in result.stderr
    assert "kvlint: 1 finding" in result.stdout


def test_options_from_args_still_apply(tmp_path):
    repo, _ = _hostile_repo(tmp_path)
    report = tmp_path / "report.json"
    result = _run_hook(repo, ["--format=json", "--output", str(report)], _files(repo))
    assert result.returncode == 1 and result.stdout == ""
    assert '"KV102"' in report.read_text()
    quiet = _run_hook(repo, ["--ignore=KV102", "--"], _files(repo))
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr


def test_split_hook_args():
    from kvlint.entry import _hook_options, split_hook_args

    options = _hook_options()
    assert split_hook_args(["--strict", "-f", "json", "a.yaml", "--strict"], options) == (
        ["--strict", "-f", "json"],
        ["a.yaml", "--strict"],
    )
    assert split_hook_args(["--", "--output=x.yaml"], options) == ([], ["--output=x.yaml"])
    assert split_hook_args(["-x.yaml", "--strict"], options) == ([], ["-x.yaml", "--strict"])


def test_split_hook_args_an_existing_file_is_a_path(tmp_path, monkeypatch):
    from kvlint.entry import _hook_options, split_hook_args

    monkeypatch.chdir(tmp_path)
    (tmp_path / "--output=v.yaml").write_text("a: 1\n")
    assert split_hook_args(["--output=v.yaml", "b.yaml"], _hook_options()) == (
        [],
        ["--output=v.yaml", "b.yaml"],
    )
    assert split_hook_args(["--output=w.yaml", "b.yaml"], _hook_options()) == (
        ["--output=w.yaml"],
        ["b.yaml"],
    )


def test_real_pre_commit_run_with_hostile_names(tmp_path):
    """The reproducer as the review ran it: `pre-commit run --all-files` with a local hook whose
    entry and types are the shipped hook's."""
    pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install -e '.[test]')")
    repo, outside = _hostile_repo(tmp_path)
    hook = _hook_definition()
    (repo / ".pre-commit-config.yaml").write_text(
        "repos: [{repo: local, hooks: [{id: kvlint, name: kvlint, "
        f"entry: {hook['entry']}, language: system, types_or: [yaml, json]}}]}}]\n"
    )
    (repo / "pod.json").write_text((FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml").read_text())
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "NO_COLOR": "1",
    }
    env.pop("GITHUB_ACTIONS", None)
    for args in (["init", "-q"], ["add", "-A", "."]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    run = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "kvlint", "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (repo / "victim.yaml").read_text() == "important: true\n"
    assert (outside / "OUTSIDE-victim.yaml").read_text() == "precious: 1\n"
    assert run.returncode == 1
    assert "with space.yaml:6:14: error KV102" in run.stdout, run.stdout
    assert "No such option" not in run.stdout
