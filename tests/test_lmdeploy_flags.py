"""LMDeploy's `serve api_server` options by release (kvlint/engines/lmdeploy/data/flag_sets.json): an option the
release in force lacks is an error where the image pins a release read, a warning that names the assumption
where none is pinned; its argparse takes an unambiguous prefix, and `_` for `-` only from v0.9.2."""

from __future__ import annotations

import json

import pytest
from conftest import lint

from kvlint.engines import facts, flag_sets
from kvlint.engines.lmdeploy import options
from kvlint.findings import Severity


def _server(image: str, *flags: str) -> str:
    """`lmdeploy serve api_server` serving Llama-3.1-8B on one L4, as fixtures/KV102/good-lmdeploy-8b-l4-16k.yaml
    writes it, with `flags` after its own."""
    args = ["meta-llama/Llama-3.1-8B-Instruct", "--session-len", "16384", "--max-batch-size", "2", *flags]
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: lmd}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n      containers:\n"
        f"      - name: lmdeploy\n        image: {image}\n"
        '        command: ["lmdeploy", "serve", "api_server"]\n'
        f"        args: {json.dumps(args)}\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


def _kv005(image: str, *flags: str) -> list[tuple[Severity, str]]:
    result = lint(_server(image, *flags), "lmd.yaml")
    return [(f.severity, f.message) for f in result.findings if f.rule == "KV005"]


def test_the_table_reads_every_release_from_0_4_0_in_order():
    t = flag_sets.table("lmdeploy")
    assert t is not None and t.releases[0] == "0.4.0"
    keys = [facts.release(r) for r in t.releases]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert all(f"lmdeploy=={r}:lmdeploy/cli/serve.py" in t.read[r] for r in t.releases)
    assert not t.inverses and t.abbreviations and t.underscores_from == "0.9.2"


def test_every_option_kvlint_reads_is_an_option_of_a_release_read():
    t = flag_sets.table("lmdeploy")
    assert t is not None
    with open(options.OPTIONS, encoding="utf-8") as fh:
        table = json.load(fh)
    assert set(table["options"]) - set(t.spans) == set()
    assert set(options.MAPPING) - set(t.spans) == set()


def test_an_option_added_in_0_8_0_is_an_error_on_0_7_3_and_clean_on_0_8_0():
    """--dp: lmdeploy==0.8.0:lmdeploy/cli/serve.py add_parser_api_server `ArgumentHelper.dp(pt_group)`; 0.7.3
    calls no such helper."""
    [(severity, message)] = _kv005("openmmlab/lmdeploy:v0.7.3-cu12", "--dp", "1")
    assert severity == Severity.ERROR
    assert "LMDeploy 0.7.3 has no option --dp (LMDeploy 0.8.0 to" in message
    assert "unrecognized arguments: --dp" in message and "the image tag v0.7.3-cu12 pins it" in message
    assert _kv005("openmmlab/lmdeploy:v0.8.0-cu12", "--dp", "1") == []


def test_a_unique_prefix_is_the_option_and_is_read():
    result = lint(_server("openmmlab/lmdeploy:v0.7.3-cu12", "--cache-max-entry", "0.4"), "lmd.yaml")
    assert [f for f in result.findings if f.rule == "KV005"] == []
    [r] = result.deployments
    assert r.deployment.extra["cache_max_entry_count"].value == pytest.approx(0.4)


def test_a_prefix_of_one_option_in_0_5_3_is_ambiguous_in_0_6_0():
    """--max-prefill: --max-prefill-iters only up to 0.5.3; 0.6.0 adds --max-prefill-token-num."""
    assert _kv005("openmmlab/lmdeploy:v0.5.3", "--max-prefill", "2") == []
    [(severity, message)] = _kv005("openmmlab/lmdeploy:v0.6.0", "--max-prefill", "2")
    assert severity == Severity.ERROR
    assert (
        "ambiguous option: --max-prefill could match --max-prefill-iters, --max-prefill-token-num" in message
    )


def test_underscores_are_dashes_only_from_0_9_2():
    """lmdeploy==0.9.2:lmdeploy/cli/cli.py builds a FlexibleArgumentParser (utils.py), which rewrites `_` in
    `--name`; 0.9.1's plain ArgumentParser stops on --session_len."""
    [(severity, message)] = _kv005("openmmlab/lmdeploy:v0.9.1", "--cache_max_entry_count", "0.4")
    assert severity == Severity.ERROR and "LMDeploy 0.9.1 has no option --cache_max_entry_count" in message
    result = lint(_server("openmmlab/lmdeploy:v0.9.2", "--cache_max_entry_count", "0.4"), "lmd.yaml")
    assert [f for f in result.findings if f.rule == "KV005"] == []
    assert result.deployments[0].deployment.extra["cache_max_entry_count"].value == pytest.approx(0.4)


def test_a_did_you_mean_names_the_release_s_option():
    result = lint(_server("openmmlab/lmdeploy:v0.9.1", "--cache_max_entry_count", "0.4"), "lmd.yaml")
    [f] = [f for f in result.findings if f.rule == "KV005"]
    assert f.fix == "did you mean --cache-max-entry-count?"


def test_an_unpinned_image_gives_a_warning_not_an_error():
    [(severity, message)] = _kv005("openmmlab/lmdeploy:latest", "--max-model-len", "4096")
    assert severity == Severity.WARNING
    assert "LMDeploy has no option --max-model-len in the releases kvlint read (0.4.0 to" in message
    assert "no release is pinned" in message
    assert _kv005("openmmlab/lmdeploy:latest", "--dp", "1") == []  # a release read has it


def test_an_image_built_by_someone_else_pins_nothing():
    """Its build may add options: an option of some release read is taken, one of none is a warning."""
    image = "registry.example.com/team/lmdeploy:v0.7.3"
    assert _kv005(image, "--dp", "1") == []
    [(severity, message)] = _kv005(image, "--max-model-len", "4096")
    assert severity == Severity.WARNING and "is not the engine's own" in message


def test_a_value_outside_the_release_s_choices_is_an_error():
    """--backend: `choices=['pytorch', 'turbomind']` (lmdeploy==0.7.3:lmdeploy/cli/utils.py ArgumentHelper.backend)."""
    [(severity, message)] = _kv005("openmmlab/lmdeploy:v0.7.3-cu12", "--backend", "vllm")  # said once
    assert severity == Severity.ERROR and "LMDeploy 0.7.3 refuses --backend 'vllm'" in message
