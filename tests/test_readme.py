"""README's two commands: CI runs the test command verbatim; the fixture command names a real fixture."""

import re

import pytest
from conftest import ROOT, SHARED


def _commands():
    return re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)


def test_ci_runs_the_readme_test_command_verbatim():
    test_cmd = next(c for c in _commands() if "pytest" in c)
    assert test_cmd in (ROOT / ".ci" / "run").read_text().splitlines()


def test_readme_fixture_command_points_at_a_fixture():
    run_cmd = next(c for c in _commands() if "kvlint fixtures/" in c)
    fixture = run_cmd.rsplit(" ", 1)[-1]
    assert (ROOT / fixture).is_file()


def _yaml_blocks():
    return re.findall(r"```yaml\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_rules_table_lists_every_rule():
    from kvlint.rules import all_rules

    text = (ROOT / "README.md").read_text()
    for rule in all_rules():
        assert f"[{rule.id}](rules/{rule.id}.md) | {rule.name} | {rule.severity.label} |" in text


def test_readme_configuration_example_is_valid(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kvlint.cli import main

    block = next(b for b in _yaml_blocks() if b.startswith("# .kvlint.yaml"))
    (tmp_path / ".kvlint.yaml").write_text(block)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["config"])
    assert r.exit_code == 0, r.output
    assert "KV004" in r.output and "warning" in r.output


def test_readme_spec_example_lints_cleanly_of_schema_errors(tmp_path):
    from conftest import lint

    block = next(b for b in _yaml_blocks() if b.startswith("kind: ServingSpec"))
    result = lint(block, "spec.yaml")
    assert result.deployments and "KV001" not in [f.rule for f in result.findings]


VLLM_LOGS = SHARED / "calibration" / "vllm_startup_logs.yaml"


@pytest.mark.skipif(
    not VLLM_LOGS.is_file(),
    reason="the vLLM start-up logs (../shared/calibration) are not beside the checkout",
)
def test_readme_accuracy_table_is_the_benchmark_output():
    """README's "How close to the engine" table is `python benchmarks/accuracy.py --markdown`, verbatim
    (regenerate it with that command when a calibration log or the accounting changes)."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "accuracy.py"), "--markdown", "--vllm", str(VLLM_LOGS)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out.startswith("| engine | split |") and out.count("\n") >= 10
    assert out in (ROOT / "README.md").read_text()
