"""Inputs: directories, excludes, .gitignore, symlink loops, unreadable and missing paths, stdin,
unrendered Helm templates."""

import os

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from kvlint.cli import main

BAD = (FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text()


def run(*args, input=None):
    return CliRunner().invoke(
        main, [*args, "--isolated", "--format", "concise"], input=input, catch_exceptions=False
    )


@pytest.fixture
def tree(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "bad.yaml").write_text(BAD)
    (tmp_path / "a" / "bad.yml").write_text(BAD)
    (tmp_path / "a" / "notes.txt").write_text(BAD)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "bad.yaml").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_directories_recurse_over_yaml_suffixes(tree):
    r = run(".")
    files = sorted({line.split(":")[0] for line in r.output.splitlines()})
    assert files == ["a/bad.yaml", "a/bad.yml", "vendor/bad.yaml"]


def test_exclude_globs(tree):
    r = run(".", "--exclude", "vendor/")
    assert "vendor" not in r.output and "a/bad.yaml" in r.output
    r = run(".", "--exclude", "*.yml")
    assert "bad.yml" not in r.output


def test_gitignore_is_respected_unless_told_otherwise(tree):
    (tree / ".gitignore").write_text("vendor/\n")
    assert "vendor" not in run(".").output
    assert "vendor" in run(".", "--no-gitignore").output


def test_symlink_loop_is_walked_once(tree):
    os.symlink(tree / "a", tree / "a" / "loop")
    r = run("a")
    assert r.exit_code == 1
    assert sorted(line.split(":")[0] for line in r.stdout.splitlines()) == ["a/bad.yaml", "a/bad.yml"]
    assert "a/loop: a symbolic link to a directory; not followed" in r.stderr  # F9: walks stay inside


def test_missing_path_and_unreadable_file_exit_2_after_linting_the_rest(tree):
    locked = tree / "a" / "locked.yaml"
    locked.write_text(BAD)
    locked.chmod(0)
    try:
        r = CliRunner().invoke(
            main, ["a", "nope.yaml", "--isolated", "--format", "concise"], catch_exceptions=False
        )
    finally:
        locked.chmod(0o644)
    assert r.exit_code == 2
    assert "a/bad.yaml:6:14: error KV102" in r.output  # the readable files were still linted
    assert "nope.yaml: no such file or directory" in r.output
    if os.geteuid() != 0:  # root reads mode-000 files
        assert "locked.yaml: cannot read" in r.output


def test_stdin():
    r = run("-", "--stdin-filename", "k8s/llama.yaml", input=BAD)
    assert r.output.startswith("k8s/llama.yaml:6:14: error KV102")


def test_helm_template_is_one_info_line(tree):
    (tree / "chart.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n"
    )
    r = run("chart.yaml")
    assert r.exit_code == 0
    assert r.output.splitlines() == [
        "chart.yaml:4:9: info KV004 unrendered Helm template ({{ … }}): not checked"
    ]


def test_explicit_file_with_other_suffix_is_linted(tree):
    r = run("a/notes.txt")
    assert "a/notes.txt:6:14: error KV102" in r.output
