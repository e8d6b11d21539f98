"""README's two commands: CI runs the test command verbatim; the fixture command names a real fixture."""

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
