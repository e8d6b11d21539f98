"""Workloads Terraform carries (kvlint/load/terraform.py): hashicorp/kubernetes blocks, kubectl_manifest
yamlencode, helm_release values, with the module's variable defaults and locals filled in."""

from __future__ import annotations

import shutil

from conftest import FIXTURES

from kvlint.load import load_bytes
from kvlint.load.terraform_blocks import _set, _typed
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

TF = FIXTURES / "terraform"


def _lint(path, display=None):
    result = read_and_lint(str(path), Settings(), display or str(path))
    assert not isinstance(result, str), result
    return result


def _by_name(result):
    return {r.deployment.name: r for r in result.deployments}


def test_kubernetes_deployment_blocks_become_the_object():
    r = _by_name(_lint(TF / "main.tf"))["mistral-7b-instruct"]
    d = r.deployment
    assert (d.kind, d.where.line) == ("Deployment", 19)  # the resource's line
    assert str(d.model.value) == "mistralai/Mistral-7B-Instruct-v0.1"
    assert int(d.gpus_per_pod.value) == 2  # resources { limits = { "nvidia.com/gpu" = "2" } }
    # node_selector = merge({gke-accelerator = nvidia-l4}, <conditional>): the literal keys are read
    assert r.gpu is not None and r.gpu.id == "l4" and r.plan is not None


def test_kubectl_manifest_takes_the_module_defaults_and_its_pool():
    r = _by_name(_lint(TF / "main.tf", "t/main.tf"))["vllm"]
    d = r.deployment
    assert str(d.model.value) == "Qwen/Qwen2.5-7B-Instruct"  # var.llm_model's default, variables.tf
    assert int(d.max_context.value) == 32768  # local.max_len, variables.tf
    # the GKE node pool in the same file: its L4 (the workload selects workload=llm)
    assert r.gpu is not None and r.gpu.id == "l4" and "l4-pool" in (d.gpu.note or "")


def test_helm_release_values_then_set():
    r = _by_name(_lint(TF / "main.tf"))["servingEngineSpec.modelSpec[0] (llama)"]
    d = r.deployment
    assert str(d.model.value) == "meta-llama/Llama-3.1-8B-Instruct"
    assert int(d.max_context.value) == 8192  # `set` over the heredoc's 131072, typed as Helm types it
    assert d.where.line == 73  # the heredoc's first line


def test_an_unstated_variable_is_named_a_placeholder(tmp_path):
    shutil.copy(TF / "main.tf", tmp_path / "main.tf")  # without variables.tf: nothing states them
    result = _lint(tmp_path / "main.tf")
    kv004 = [f.message for f in result.findings if f.rule == "KV004"]
    assert any("var.llm_model is not stated in its module" in m for m in kv004)
    assert any("local.max_len" in m for m in kv004)


def test_a_tf_file_that_does_not_parse_is_said_not_read():
    loaded = load_bytes(b'resource "kubernetes_deployment" "x" {\n  metadata { name = \n', "bad.tf")
    assert loaded.documents == []
    (issue,) = loaded.issues
    assert "does not parse as HCL" in issue.message and issue.where.line == 1


def test_a_tf_file_with_no_kubernetes_resource_is_not_parsed():
    loaded = load_bytes(b'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n', "s3.tf")
    assert loaded.documents == [] and loaded.issues == []


def test_helm_set_paths_and_types():
    values: dict = {"a": {"b": 1}}
    _set(values, "a.c", _typed("true"))
    _set(values, r"annotations.example\.com/x", "y")
    _set(values, "list[1].name", _typed("42"))
    assert values == {
        "a": {"b": 1, "c": True},
        "annotations": {"example.com/x": "y"},
        "list": [{}, {"name": 42}],
    }
    assert _typed("007") == "007" and _typed("1.5") == "1.5"  # only plain integers become numbers
