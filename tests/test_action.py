"""The GitHub Action (action.yml) and the workflows README.md and docs/ci.md publish: valid against SchemaStore's schemas
(check-jsonschema's vendored copies), clean under zizmor's audit, and the Action's script really
runs kvlint with its inputs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT
from ruamel.yaml import YAML

ACTION = ROOT / "action.yml"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def _workflows(*pages: str) -> list[str]:
    """The workflows README.md and docs/ci.md publish (or those of the pages named)."""
    blocks = []
    for page in pages or ("README.md", "docs/ci.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        blocks += re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    return [b for b in blocks if b.startswith("name:") and "\njobs:" in b]


def test_readme_has_the_action_workflow_and_ci_page_the_reviewdog_one():
    assert any("uses: kvlint/kvlint@" in f for f in _workflows("README.md"))
    assert any("--format rdjson" in f and "reviewdog -f=rdjson" in f for f in _workflows("docs/ci.md"))


def test_action_and_workflows_match_schemastore_schemas(tmp_path):
    tool = _tool("check-jsonschema")
    done = subprocess.run(
        [tool, "--builtin-schema", "vendor.github-actions", str(ACTION)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for i, flow in enumerate(_workflows()):
        path = tmp_path / f"flow{i}.yml"
        path.write_text(flow)
        done = subprocess.run(
            [tool, "--builtin-schema", "vendor.github-workflows", str(path)], capture_output=True, text=True
        )
        assert done.returncode == 0, flow + done.stdout + done.stderr


def test_zizmor_finds_nothing_in_the_action_and_the_workflows(tmp_path):
    tool = _tool("zizmor")
    flows = tmp_path / ".github" / "workflows"
    flows.mkdir(parents=True)
    for i, flow in enumerate(_workflows()):
        (flows / f"flow{i}.yml").write_text(flow)
    shutil.copyfile(ACTION, tmp_path / "action.yml")
    # The README adopts kvlint by its release tag (a team pins a SHA of its own choosing); every
    # third-party action is pinned to a commit.
    (tmp_path / "zizmor.yml").write_text(
        "rules:\n  unpinned-uses:\n    config:\n      policies:\n        kvlint/*: ref-pin\n        '*': hash-pin\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    done = subprocess.run(
        [tool, "--offline", "--no-progress", "--config", str(tmp_path / "zizmor.yml"), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _step(name: str) -> dict:
    action = YAML(typ="safe").load(ACTION.read_text())
    return next(s for s in action["runs"]["steps"] if s.get("name") == name)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_actions_run_step_lints_writes_sarif_and_sets_its_output(tmp_path):
    step = _step("Run kvlint")
    out = tmp_path / "github_output"
    bad = FIXTURES / "KV204" / "fix-safe-args-equals.yaml"
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_OUTPUT": str(out),
        "KVLINT_PATHS": f"{bad} {FIXTURES / 'KV204' / 'good.yaml'}",
        "KVLINT_ARGS": "--isolated --select KV2",
        "KVLINT_FORMAT": "github",
        "KVLINT_SARIF": str(tmp_path / "kvlint.sarif"),
        "KVLINT_FAIL_ON": "error",
    }
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "::error file=" in done.stdout and "KV204" in done.stdout
    assert (tmp_path / "kvlint.sarif").read_text().count('"ruleId": "KV204"') == 1
    assert out.read_text() == "exit-code=1\n"
    env["KVLINT_PATHS"] = str(FIXTURES / "KV204" / "good.yaml")
    out.write_text("")
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and out.read_text() == "exit-code=0\n", done.stdout + done.stderr
