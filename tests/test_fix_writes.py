"""Writes that can neither escape the tree nor corrupt a file (security review 3, class E: S7, S15,
S16), and `--diff` output the GitHub runner cannot read commands from (S14). Each reproducer is
rebuilt from the review's description."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_fix_safety import _HEAD, _LIMITS, MODEL

from kvlint.fix import files
from kvlint.run.lint import file_linter
from kvlint.run.settings import Settings

# KV208's safe fix (1.5 -> 0.9) on a plain args list: what --fix writes
FIXABLE = (
    _HEAD
    + f"""        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "{MODEL}", "--max-model-len", "8192", "--gpu-memory-utilization", "1.5"]
"""
    + _LIMITS
)


def fix_files(shown: list[tuple[str, str]]) -> files.FixRun:
    """`--fix` over these (path, shown) pairs, as the command line runs it."""
    settings = Settings()
    return files.fix_files(
        shown, lambda path, display: file_linter(settings, display, path), settings.max_file_size, False, True
    )


def _run(*args: str, cwd: Path, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kvlint", "--isolated", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        **kw,
    )


@pytest.mark.parametrize("target", ["outside", "/"])
def test_s07_named_directory_that_links_out_is_refused(target, tmp_path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (outside / "victim.yaml").write_text(FIXABLE)
    os.symlink("../outside" if target == "outside" else "/", repo / "deploy")
    for flags in (["--fix"], []):
        result = _run(*flags, "deploy", cwd=repo)
        # was: outside/victim.yaml rewritten; with `deploy -> /` the whole filesystem walked
        assert result.returncode == 2, result.stderr
        assert "deploy: leads out of the working directory through a symbolic link" in result.stderr
        assert "KV208" not in result.stdout
    assert (outside / "victim.yaml").read_text() == FIXABLE
    # a file named through the link is refused the same way; the real path named is linted
    assert _run("--fix", "deploy/victim.yaml", cwd=repo).returncode == 2
    if target == "outside":
        assert _run("--exit-zero", str(outside / "victim.yaml"), cwd=repo).returncode == 0


def test_s07_named_link_that_stays_inside_is_followed(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "d.yaml").write_text(FIXABLE)
    os.symlink("real", tmp_path / "deploy")
    result = _run("--fix", "deploy", cwd=tmp_path)
    assert "fixed 1 finding" in result.stderr, result.stderr
    assert '"0.9"' in (tmp_path / "real" / "d.yaml").read_text()


def _limit_file_size(size: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def test_s15_a_failed_write_leaves_the_original_and_exits_2(tmp_path):
    """RLIMIT_FSIZE stands in for a full disk or a quota, as in the review (`ulimit -f`)."""
    work = tmp_path / "d.yaml"
    text = FIXABLE + "".join(f"# padding line {n:05d} to make the file large\n" for n in range(2500))
    work.write_text(text)
    result = _run("--unsafe-fixes", "d.yaml", cwd=tmp_path, preexec_fn=_limit_file_size(len(text) - 10))
    # was: the file overwritten in place up to the limit (its tail lost), and "fixed 1 finding"
    assert work.read_text() == text
    assert result.returncode == 2
    assert "d.yaml: cannot write the fixed file" in result.stderr and "unchanged" in result.stderr
    assert "fixed" not in result.stderr.replace("the fixed file", "")
    assert not [p for p in tmp_path.iterdir() if p.name != "d.yaml"]  # no temporary file left


def test_s16_file_swapped_for_a_link_between_read_and_write_is_not_written_through(tmp_path, monkeypatch):
    """The race made deterministic: the lint rounds (between read and write) swap the file for a
    symbolic link to a file outside the tree."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    target = outside / "target.txt"
    target.write_text("not yaml\n")
    work = repo / "d.yaml"
    work.write_text(FIXABLE)
    real = files.fix_bytes

    def swapping(*args, **kwargs):
        out = real(*args, **kwargs)
        work.unlink()
        os.symlink(target, work)
        return out

    monkeypatch.setattr(files, "fix_bytes", swapping)
    monkeypatch.chdir(repo)
    run = fix_files([("d.yaml", "d.yaml")])
    assert target.read_text() == "not yaml\n"  # was: overwritten with the fixed manifest
    assert os.path.islink(work)
    assert run.errors and run.errors[0].startswith("d.yaml: cannot write the fixed file")
    assert not run.applied and run.changed_files == 0


def test_file_edited_between_read_and_write_is_not_overwritten(tmp_path, monkeypatch):
    work = tmp_path / "d.yaml"
    work.write_text(FIXABLE)
    real = files.fix_bytes

    def editing(*args, **kwargs):
        out = real(*args, **kwargs)
        work.write_text(FIXABLE + "# the user's edit\n")
        return out

    monkeypatch.setattr(files, "fix_bytes", editing)
    run = fix_files([(str(work), "d.yaml")])
    assert work.read_text().endswith("# the user's edit\n")
    assert run.errors and "changed while it was being fixed" in run.errors[0]


def test_fix_keeps_mode_bits_and_refuses_hard_linked_files(tmp_path):
    work = tmp_path / "d.yaml"
    work.write_text(FIXABLE)
    os.chmod(work, 0o640)
    assert "fixed 1 finding" in _run("--fix", "d.yaml", cwd=tmp_path).stderr
    assert stat.S_IMODE(os.stat(work).st_mode) == 0o640
    linked = tmp_path / "e.yaml"
    linked.write_text(FIXABLE)
    os.link(linked, tmp_path / "other-name.yaml")
    result = _run("--fix", "e.yaml", cwd=tmp_path)
    assert "e.yaml: has 2 hard links" in result.stderr and linked.read_text() == FIXABLE


S14 = (
    _HEAD
    + f"""        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command:
            - sh
            - -c
            - |
              ::error file=README.md,line=9::INJECTED
              vllm serve {MODEL} --gpu-memory-utilization 1.5
"""
    + _LIMITS
)


def _commands(out: str) -> list[str]:
    """The lines the runner reads as workflow commands: `::` after TrimStart, outside a
    `::stop-commands::TOKEN` … `::TOKEN::` section."""
    found, stopped = [], None
    for line in out.splitlines():
        bare = line.lstrip()
        if stopped is not None:
            if bare == f"::{stopped}::":
                stopped = None
            continue
        if bare.startswith("::stop-commands::"):
            stopped = bare[len("::stop-commands::") :]
        elif bare.startswith("::"):
            found.append(line)
    return found


def test_s14_diff_context_line_is_no_workflow_command_under_github_actions(tmp_path):
    (tmp_path / "d.yaml").write_text(S14)
    plain = _run("--diff", "d.yaml", cwd=tmp_path, env={"GITHUB_ACTIONS": ""})
    assert " ::error file=README.md,line=9::INJECTED" in plain.stdout  # the diff itself, as patch reads it
    result = _run("--diff", "d.yaml", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert result.returncode == 1 and "+" in result.stdout
    assert _commands(result.stdout) == []  # was: ` ::error file=README.md,line=9::INJECTED`
    stdin = _run("--diff", "-", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"}, input=S14)
    assert "INJECTED" in stdin.stdout and _commands(stdin.stdout) == []
