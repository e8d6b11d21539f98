"""Discovery that an outsider's files cannot steer (F3, F4, F9, F19, F25, and issue 9's prefix
bug): linear wildmatch, .gitignore read only if a regular file within a cap, walks that stay
inside the named directory, nothing skipped silently, per-file-ignores anchored as documented."""

from __future__ import annotations

import os
import shutil
import threading

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, cpu_seconds

from kvlint.cli import main

BAD = FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml"
KV103 = FIXTURES / "KV103"


def run(*args: str):
    return CliRunner().invoke(main, ["--isolated", "--format", "concise", *args], catch_exceptions=False)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / "deploy").mkdir()
    shutil.copy(BAD, tmp_path / "deploy" / "a.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_f3_gitignore_glob_is_linear(repo):
    """23 bytes of .gitignore and a 36-character name took 15.9 s through a regex."""
    shutil.copy(BAD, repo / "deploy" / ("a" * 36 + ".yaml"))
    (repo / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*b\n")
    nested = repo / "deploy" / "/".join("d" * 20)
    (nested / "x").mkdir(parents=True)
    shutil.copy(BAD, nested / "y.yaml")  # 20 levels the 14 globstars must try and fail on
    shutil.copy(BAD, nested / "x" / "x.yaml")
    (repo / "deploy" / ".gitignore").write_text("/".join(["**"] * 14) + "/x\n")
    start = cpu_seconds()
    r = run("deploy")
    assert cpu_seconds() - start < 5
    assert "a" * 36 + ".yaml" in r.stdout  # the pattern does not match it: it is linted
    assert "d/y.yaml" in r.stdout and "x.yaml" not in r.stdout  # directory x matches at depth 21
    text = CliRunner().invoke(main, ["--isolated", "deploy"]).stdout
    assert "skipped: 1 by .gitignore" in text  # and the skip is counted


def test_f3_exclude_glob_is_linear(repo):
    shutil.copy(BAD, repo / "deploy" / ("a" * 200 + ".yaml"))
    start = cpu_seconds()
    r = run("deploy", "--exclude", "*a" * 30 + "*b")
    assert cpu_seconds() - start < 5 and r.exit_code == 1


def test_f4_gitignore_symlinked_to_dev_zero_is_not_read(repo):
    os.symlink("/dev/zero", repo / ".gitignore")
    r = run("deploy/a.yaml")
    assert r.exit_code == 1 and "deploy/a.yaml:6:14: error KV102" in r.stdout
    assert ".gitignore: not read" in r.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_f4_gitignore_fifo_does_not_hang(repo):
    os.mkfifo(repo / ".gitignore")
    os.mkfifo(repo / "deploy" / ".gitignore")
    out: dict = {}
    worker = threading.Thread(target=lambda: out.setdefault("r", run("deploy")), daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "kvlint hung on a FIFO .gitignore"
    assert out["r"].exit_code == 1 and "not a regular file" in out["r"].stderr


def test_f4_oversized_gitignore_is_not_read_and_says_so(repo):
    (repo / ".gitignore").write_text("deploy/\n" + "x" * 400_000 + "\n")
    r = run("deploy")
    assert "a.yaml" in r.stdout and ".gitignore: not read (" in r.stderr


def test_f9_directory_symlinks_out_of_the_tree_are_not_followed(repo, tmp_path_factory):
    secrets = tmp_path_factory.mktemp("secrets")
    (secrets / "db.yaml").write_text("kind: ServingSpec\npassword: again\n")
    os.symlink(secrets, repo / "deploy" / "cfg")
    os.symlink("/", repo / "deploy" / "root")
    os.symlink(secrets / "db.yaml", repo / "deploy" / "db.yaml")
    start = cpu_seconds()
    r = CliRunner().invoke(main, ["--isolated", "deploy"])
    assert cpu_seconds() - start < 10
    assert r.exit_code == 2  # a file link out of the tree is a manifest not checked: fail closed
    assert "again" not in r.output and "db.yaml" not in r.stdout
    assert "deploy/root: a symbolic link to a directory; not followed" in r.stderr
    assert "deploy/db.yaml: a symbolic link out of deploy; not followed" in r.stderr
    assert "3 symbolic links not followed" in r.stdout


def test_f19_a_named_directory_is_linted_even_if_gitignored(repo):
    (repo / ".gitignore").write_text("deploy/\n")
    assert "deploy/a.yaml:6:14" in run("deploy").stdout
    assert "deploy/a.yaml" not in run(".").stdout  # found by a walk from above: skipped


def test_f19_gitignore_skipping_everything_is_an_error_not_a_pass(repo):
    (repo / ".gitignore").write_text("deploy/*\n")
    r = run("deploy")
    assert r.exit_code == 2 and "no problems found" not in r.output
    assert "every manifest under it is skipped" in r.stderr
    assert run("deploy", "--no-gitignore").exit_code == 1


def test_f19_nested_gitignore_skips_are_counted(repo):
    team = repo / "deploy" / "team"
    team.mkdir()
    shutil.copy(BAD, team / "b.yaml")
    (team / ".gitignore").write_text("*\n")
    r = run("deploy")
    assert r.exit_code == 1 and "deploy/a.yaml" in r.stdout and "team/b.yaml" not in r.stdout
    text = CliRunner().invoke(main, ["--isolated", "deploy"]).stdout
    assert "(1 file linted; skipped: 1 by .gitignore)" in text


def test_f19_gitignore_in_the_named_directory_applies(repo):
    shutil.copy(BAD, repo / "deploy" / "ignored.yaml")
    (repo / "deploy" / ".gitignore").write_text("ignored.yaml\n")
    r = run("deploy")
    assert "deploy/a.yaml" in r.stdout and "ignored.yaml" not in r.stdout


def test_f19_explicit_file_is_linted_even_if_gitignored(repo):
    (repo / ".gitignore").write_text("deploy/\n")
    assert "deploy/a.yaml:6:14" in run("deploy/a.yaml").stdout


def test_f19_empty_run_does_not_claim_no_problems(repo):
    (repo / "empty").mkdir()
    r = CliRunner().invoke(main, ["--isolated", "empty"])
    assert r.exit_code == 0 and "no problems found" not in r.stdout and "no files linted" in r.stdout


def test_issue9_prefix_strip_dot_github_is_matched(repo):
    """`str.lstrip("./")` strips characters: `.github/` never matched `.github/x.yaml`."""
    (repo / ".github").mkdir()
    shutil.copy(BAD, repo / ".github" / "w.yaml")
    (repo / ".gitignore").write_text(".github/\n")
    r = run(".")
    assert "deploy/a.yaml" in r.stdout and ".github" not in r.stdout


def test_issue9_exclude_hidden_file_name(repo):
    shutil.copy(BAD, repo / "deploy" / ".hidden.yaml")
    shutil.copy(BAD, repo / "deploy" / "hidden.yaml")
    r = run("deploy", "--exclude", ".hidden.yaml")
    assert "deploy/hidden.yaml" in r.stdout and "deploy/.hidden.yaml" not in r.stdout
    r = run("deploy/.hidden.yaml", "deploy/hidden.yaml", "--exclude", "./deploy/.hidden.yaml")
    assert "deploy/hidden.yaml" in r.stdout and "deploy/.hidden.yaml" not in r.stdout


def test_f25_per_file_ignores_are_anchored_to_the_config_directory(tmp_path, monkeypatch):
    project = tmp_path / "pfi"
    for rel in ("examples/a.yaml", "prod/examples/deep/b.yaml", "hidden/d.yaml", ".hidden/e.yaml"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(BAD, project / rel)
    (tmp_path / "pfi2" / "examples").mkdir(parents=True)
    shutil.copy(BAD, tmp_path / "pfi2" / "examples" / "y.yaml")
    (project / ".kvlint.yaml").write_text(
        'per-file-ignores: {"examples/*": [KV102], "./.hidden/*": [KV102]}\n'
    )
    monkeypatch.chdir(project)
    r = CliRunner().invoke(main, ["--format", "concise", ".", "../pfi2"], catch_exceptions=False)
    findings = [line for line in r.stdout.splitlines() if not line.startswith("kvlint: note:")]
    flagged = {line.split(":")[0] for line in findings if "KV102" in line}
    assert flagged == {"prod/examples/deep/b.yaml", "hidden/d.yaml", "../pfi2/examples/y.yaml"}
    assert "per-file-ignores: 'examples/*': KV102" in r.stdout  # what the configuration switched off


def test_wildmatch_semantics():
    from kvlint.wildmatch import compile_pattern as c

    assert c("*.yaml").matches("a/b/c.yaml", False)
    assert c("/a/*.yaml").matches("a/x.yaml", False) and not c("/a/*.yaml").matches("b/a/x.yaml", False)
    assert c("docs/**/x").matches("docs/x", False) and c("docs/**/x").matches("docs/a/b/x", False)
    assert c("**/x").matches("a/b/x", False) and c("a/**").matches("a/b/c", False)
    assert c("[!a]b").matches("cb", False) and not c("[!a]b").matches("ab", False)
    assert c("[a-c]?").matches("bz", False) and not c("[a-c]?").matches("dz", False)
    assert c("build/").matches("build", True) and not c("build/").matches("build", False)
    assert c("\\#x").matches("#x", False) and c("# comment") is None and c("   ") is None
    assert c("a*b*c").matches("aXXbYYc", False) and not c("a*b*c").matches("aXXbYY", False)
