"""`kvlint plan` on several GPU types: --fleet and repeated --gpu, MIG profiles among them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kvlint.cli import main


def plan(*args: str):
    return CliRunner().invoke(main, ["plan", *args])


def test_fleet_says_where_it_fits_and_how_many_elsewhere():
    r = plan(
        "meta-llama/Llama-3.3-70B-Instruct",
        "--fleet",
        "L4,A100-80GB,H100",
        "--gpus",
        "2",
        "--context",
        "8192",
    )
    assert r.exit_code == 0, r.output
    head = r.output.splitlines()[:3]
    assert head[0] == "meta-llama/Llama-3.3-70B-Instruct at 2 GPUs on 3 GPU types"
    assert head[1].startswith("  fits on:") and "A100 80GB SXM4" in head[1] and "H100 SXM5" in head[1]
    assert head[2].startswith("  does not fit on: NVIDIA L4 (needs ") and "L4" not in head[1]
    assert r.output.count(" as the engine sees it)") == 3  # one full plan per type


def test_repeated_gpu_with_a_mig_profile_and_json():
    r = plan(
        "Qwen/Qwen2.5-7B-Instruct", "--gpu", "a100-80gb:1g.10gb", "--gpu", "a100-80gb:3g.40gb", "-f", "json"
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["fits_on"] == ["a100-80gb-sxm:3g.40gb"] and data["does_not_fit_on"] == [
        "a100-80gb-sxm:1g.10gb"
    ]
    assert [p["gpu"] for p in data["plans"]] == ["a100-80gb-sxm:1g.10gb", "a100-80gb-sxm:3g.40gb"]
    text = plan("Qwen/Qwen2.5-7B-Instruct", "--gpu", "a100-80gb:1g.10gb", "--gpu", "a100-80gb:3g.40gb").output
    assert "MIG 1g.10gb (no tensor parallelism over MIG slices: a larger profile)" in text


def test_an_unknown_type_in_the_fleet_is_a_usage_error_naming_it():
    r = plan("Qwen/Qwen2.5-7B-Instruct", "--fleet", "L4,H1000")
    assert r.exit_code == 2 and "on H1000:" in r.output and "not in the kvlint catalog" in r.output
    r = plan("Qwen/Qwen2.5-7B-Instruct")
    assert r.exit_code == 2 and "--fleet" in r.output


def test_one_gpu_keeps_the_single_plan_output():
    one = plan("Qwen/Qwen2.5-7B-Instruct", "--gpu", "L4").output
    assert one.startswith("Qwen/Qwen2.5-7B-Instruct on 1 x NVIDIA L4") and "GPU types" not in one
