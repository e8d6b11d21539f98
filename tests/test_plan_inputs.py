"""F28: `kvlint plan` validates its inputs: a usage error (exit 2) naming the accepted range."""

import pytest
from click.testing import CliRunner

from kvlint.cli import main

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize(
    "args",
    [
        ["--gpus", "-1"],
        ["--gpus", "0"],
        ["--utilization", "2"],
        ["--utilization", "-1"],
        ["--utilization", "nan"],
        ["--utilization", "inf"],
        ["--context", "-5"],
        ["--context", "0"],
        ["--sequences", "-3"],
        ["--kv-cache-dtype", "evil"],
    ],
)
def test_bad_plan_input_is_a_usage_error(args):
    r = CliRunner().invoke(main, ["plan", MODEL, "--gpu", "H100", *args])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "Invalid value" in r.output


def test_good_plan_input_still_plans():
    r = CliRunner().invoke(
        main, ["plan", MODEL, "--gpu", "H100", "--gpus", "1", "--utilization", "0.9", "--context", "32k"]
    )
    assert r.exit_code == 0, r.output
