"""README's two commands: CI runs the test command verbatim; the fixture command names a real fixture.
The rest of README's content is checked with docs/ in tests/test_docs.py."""

import re

from conftest import ROOT


def _commands():
    return re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)


def test_ci_runs_the_readme_test_command_verbatim():
    test_cmd = next(c for c in _commands() if "pytest" in c)
    assert test_cmd in (ROOT / ".ci" / "run").read_text().splitlines()


def test_readme_fixture_command_points_at_a_fixture():
    run_cmd = next(c for c in _commands() if "kvlint fixtures/" in c)
    fixture = run_cmd.rsplit(" ", 1)[-1]
    assert (ROOT / fixture).is_file()


def test_readme_configuration_example_is_valid(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kvlint.cli import main

    text = (ROOT / "README.md").read_text()
    block = next(
        b for b in re.findall(r"```yaml\n(.+?)\n```", text, flags=re.S) if b.startswith("# .kvlint.yaml")
    )
    (tmp_path / ".kvlint.yaml").write_text(block)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["config"])
    assert r.exit_code == 0, r.output
    assert "KV004  (.kvlint.yaml)" in r.output and "warning  (.kvlint.yaml)" in r.output
