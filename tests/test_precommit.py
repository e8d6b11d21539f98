"""The real `pre-commit try-repo` against this repository's hook: it fails on a bad file and
passes on a good one. Skipped, with the reason, only if pre-commit cannot be imported."""

import os
import subprocess
import sys

import pytest
from conftest import FIXTURES, ROOT


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
def test_pre_commit_try_repo(tmp_path):
    pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install -e '.[test]')")
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", cwd=work)
    (work / "bad.yaml").write_text((FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text())
    (work / "good.yaml").write_text((FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml").read_text())
    _git("add", "bad.yaml", "good.yaml", cwd=work)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)

    def try_repo(name):
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "kvlint", "--files", name],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    bad = try_repo("bad.yaml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "bad.yaml:6:14: error KV102 kv-cache-below-max-context" in bad.stdout
    good = try_repo("good.yaml")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
