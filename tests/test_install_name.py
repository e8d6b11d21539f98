"""The distribution name: PyPI's "kvlint" is another project (a prefix-cache log analyser), so no
install line kvlint publishes may name it. Every pip/pipx/uv install command in README, docs/,
action.yml and the package's own messages is parsed word by word, and the Action refuses a
`version:` input that names the bare project."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import pytest
from conftest import ROOT
from ruamel.yaml import YAML

DIST = "kvlint-serving"
INSTALL = re.compile(r"(?:pip3?|pipx|uv(?: pip| tool)?)\s+install\b([^\n`]*)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(args: str) -> list[str]:
    """The project names an install command's words ask for (options, paths and URLs left out)."""
    try:
        words = shlex.split(args.split("#", 1)[0].split("&&", 1)[0])
    except ValueError:
        words = args.split()
    names = []
    for word in words:
        if word.startswith("-") or word.startswith((".", "/", "git+", "http")) or "://" in word:
            continue
        found = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)", word)
        if found:
            names.append(_normal(found.group(1)))
    return names


def _published_texts() -> dict[str, str]:
    paths = [ROOT / "README.md", ROOT / "action.yml", ROOT / ".pre-commit-hooks.yaml", *_doc_pages()]
    paths += sorted((ROOT / "kvlint").rglob("*.py"))
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths if p.is_file()}


def _doc_pages() -> list:
    """Every page of docs/ and every rule page."""
    return [*sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "rules").glob("*.md"))]


def test_the_scan_reads_every_docs_page_and_finds_their_install_lines():
    texts = _published_texts()
    docs = [p for p in _doc_pages() if p.parent.name == "docs"]
    assert docs and all(str(p.relative_to(ROOT)) in texts for p in docs)
    in_docs = [m for where, t in texts.items() if where.startswith("docs") for m in INSTALL.finditer(t)]
    assert any(DIST in _requirement_names(m.group(1)) for m in in_docs)


def test_the_distribution_is_not_the_pypi_name_kvlint():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["name"] == DIST
    assert set(meta["scripts"]) == {"kvlint", "kvlint-hook"}


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("pip install kvlint", ["kvlint"]),
        ("python -m pip install -q 'KvLint[hub]==0.1'", ["kvlint"]),
        ("pipx install kv_lint", ["kv-lint"]),
        ("pip install -q -e '.[test]'", []),
        ("pip install kvlint-serving  # or: pip install git+<this repository>", ["kvlint-serving"]),
    ],
)
def test_install_words_are_read_as_pip_reads_them(line, names):
    assert _requirement_names(INSTALL.search(line).group(1)) == names


def test_no_published_install_line_names_the_bare_kvlint():
    bad = []
    for where, text in _published_texts().items():
        for found in INSTALL.finditer(text):
            if "kvlint" in _requirement_names(found.group(1)):
                bad.append(f"{where}: {found.group(0).strip()}")
    assert not bad, "install lines that would fetch PyPI's other 'kvlint':\n" + "\n".join(bad)


def _install_step() -> str:
    action = YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))
    return next(s for s in action["runs"]["steps"] if s.get("name") == "Install kvlint")["run"]


@pytest.mark.parametrize("requirement", ["kvlint", "kvlint==0.1.0", "KvLint[hub]>=0.1", " KVLINT"])
def test_the_action_refuses_a_version_naming_the_bare_project(tmp_path, requirement):
    shim = tmp_path / "python"
    # `python -m pip ...` must never be reached: the shim records any call that is not the guard.
    shim.write_text(
        f'#!/bin/sh\nif [ "$1" = "-m" ]; then echo pip-called >> {tmp_path}/log; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}",
        "KVLINT_REQUIREMENT": requirement,
        "KVLINT_ACTION_PATH": str(ROOT),
    }
    done = subprocess.run(["bash", "-e", "-c", _install_step()], env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "kvlint-serving" in done.stderr
    assert not (tmp_path / "log").exists()


def test_the_action_installs_a_requirement_for_its_own_name(tmp_path):
    shim = tmp_path / "python"
    shim.write_text(
        f'#!/bin/sh\nif [ "$1" = "-m" ]; then echo "$@" >> {tmp_path}/log; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}",
        "KVLINT_REQUIREMENT": f"{DIST}==0.1.0",
        "KVLINT_ACTION_PATH": str(ROOT),
    }
    done = subprocess.run(["bash", "-e", "-c", _install_step()], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "log").read_text() == f"-m pip install --quiet {DIST}==0.1.0\n"
