"""One resolver for `var.*` / `local.*` in every .tf reader (load/terraform_names.py): node pools get the
module's variable defaults, tfvars and locals as the workload reader does; and what a .tf file renders from a
template file (`yamldecode(templatefile(...))`, a helm_release `values = [templatefile(...)]`) is read from
that file, bounded and inside the repository (load/terraform_files.py).

The node pool is the shape of dudaji/terraform-gke gke_node_pool/main.tf (guest_accelerator `type =
var.gpu_type`), the precedence Terraform's (developer.hashicorp.com/terraform/language/values/variables,
"Variable Definition Precedence")."""

from __future__ import annotations

import os

from kvlint.extract.kinds import node_pools_tf
from kvlint.load import terraform_names as tf_names
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

_VARIABLES = """
variable "gpu_type" {
  default = "nvidia-tesla-t4"
}
variable "pool" {
  default = { machine_type = "n1-standard-8", gpus = 2 }
}
variable "region" {
  default = "us-central1"
}
locals {
  accelerator = var.gpu_type
  zone        = "${var.region}-a"
  types       = ["g5.12xlarge"]
  computed    = module.vpc.id
}
"""
_POOLS = """
resource "google_container_node_pool" "gpu" {
  name           = "gpu-pool"
  node_locations = [local.zone]
  node_config {
    machine_type = var.pool.machine_type
    guest_accelerator {
      type  = local.accelerator
      count = var.pool.gpus
    }
  }
}
resource "aws_eks_node_group" "g" {
  node_group_name = "g5"
  instance_types  = local.types
}
"""


def _pools(folder):
    (folder / "variables.tf").write_text(_VARIABLES)
    (folder / "main.tf").write_text(_POOLS)
    return {p.name: p for p in node_pools_tf.read(_POOLS, "main.tf", str(folder / "main.tf"))}


def test_node_pools_take_the_module_s_defaults_and_locals(tmp_path):
    found = _pools(tmp_path)
    assert found["gpu-pool"].gpus == (("t4", 2),)  # local.accelerator -> var.gpu_type; var.pool.gpus
    assert found["gpu-pool"].instance_types == ("n1-standard-8",)
    assert found["g5"].gpus == (("a10g", 4),)  # local.types: a list


def test_tfvars_override_defaults_in_terraform_s_order(tmp_path):
    (tmp_path / "terraform.tfvars").write_text('gpu_type = "nvidia-tesla-a100"\n')
    assert _pools(tmp_path)["gpu-pool"].gpus == (("a100-40gb-sxm", 2),)
    (tmp_path / "b.auto.tfvars").write_text('gpu_type = "nvidia-l4"\n')  # auto.tfvars after terraform.tfvars
    assert _pools(tmp_path)["gpu-pool"].gpus == (("l4", 2),)
    (tmp_path / "prod.tfvars").write_text('gpu_type = "nvidia-h100-80gb"\n')  # a -var-file: the caller's
    assert _pools(tmp_path)["gpu-pool"].gpus == (("l4", 2),)


def test_what_terraform_computes_stays_unstated():
    known = tf_names.settle({"local.a": "${module.vpc.id}", "local.b": "${local.a}-x", "var.c": "c"})
    assert known == {"var.c": "c"}  # module.* is no literal; a local naming it neither
    assert tf_names.fill("${var.c}-${var.nope}", known) == "c-${var.nope}"
    assert tf_names.fill("${var.c.x}", known) == "${var.c.x}"  # no such attribute: kept


def test_a_link_among_the_module_files_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "variables.tf").write_text(_VARIABLES)
    mod = tmp_path / "mod"
    mod.mkdir()
    os.symlink("../outside/variables.tf", mod / "variables.tf")
    (mod / "main.tf").write_text(_POOLS)
    found = {p.name: p for p in node_pools_tf.read(_POOLS, "main.tf", str(mod / "main.tf"))}
    assert found["gpu-pool"].gpus != (("t4", 2),)


_TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.0
          args: ["--model", "${model}", "--max-model-len", "${max_len}"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""
_MANIFEST = """
variable "model" {
  default = "Qwen/Qwen2.5-7B-Instruct"
}
resource "kubernetes_manifest" "vllm" {
  manifest = yamldecode(templatefile("${path.module}/manifests/vllm.yaml.tftpl", {
    model   = var.model
    max_len = 8192
  }))
}
"""


def _repo(tmp_path, tf: str = _MANIFEST, template: str = _TEMPLATE, name: str = "vllm.yaml.tftpl"):
    (tmp_path / ".git").mkdir()
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / name).write_text(template)
    (tmp_path / "main.tf").write_text(tf)
    result = read_and_lint(str(tmp_path / "main.tf"), Settings(), "main.tf")
    assert not isinstance(result, str)
    return result


def test_a_templatefile_manifest_is_read_from_its_template(tmp_path):
    result = _repo(tmp_path)
    (r,) = result.deployments
    d = r.deployment
    assert d.model.value == "Qwen/Qwen2.5-7B-Instruct" and int(d.max_context.value) == 8192
    assert d.where.file == "manifests/vllm.yaml.tftpl" and r.plan is not None  # findings point into it


def test_a_kubectl_manifest_yaml_body_from_a_templatefile(tmp_path):
    """`yaml_body = templatefile(...)` (awslabs/data-on-eks infra/terraform/ray-operator.tf's form)."""
    tf = _MANIFEST.replace('resource "kubernetes_manifest" "vllm"', 'resource "kubectl_manifest" "vllm"')
    tf = tf.replace("manifest = yamldecode(templatefile(", "yaml_body = templatefile(").replace("}))", "})")
    (r,) = _repo(tmp_path, tf).deployments
    assert r.deployment.model.value == "Qwen/Qwen2.5-7B-Instruct"


def test_a_template_variable_the_call_does_not_give_is_a_named_placeholder(tmp_path):
    result = _repo(tmp_path, _MANIFEST.replace("    max_len = 8192\n", ""))
    said = [f.message for f in result.findings if f.rule == "KV004"]
    assert any("${max_len} is not given a literal value" in m for m in said), said


def test_a_template_outside_the_repository_is_not_read(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "vllm.yaml.tftpl").write_text(_TEMPLATE)
    (repo / ".git").mkdir()
    (repo / "main.tf").write_text(
        _MANIFEST.replace("${path.module}/manifests", "${path.module}/../manifests")
    )
    result = read_and_lint(str(repo / "main.tf"), Settings(), "main.tf")
    assert not isinstance(result, str) and not result.deployments
    assert any("lies outside the repository" in f.message for f in result.findings)


def test_helm_release_values_from_a_templatefile(tmp_path):
    """A helm_release `values = [templatefile(...)]` (the vLLM production-stack chart's keys)."""
    values = (
        "servingEngineSpec:\n  modelSpec:\n  - name: qwen\n    repository: vllm/vllm-openai\n    tag: v0.10.0\n"
        '    modelURL: "${model}"\n    replicaCount: 1\n    requestGPU: 1\n'
    )
    tf = (
        'variable "model" {\n  default = "Qwen/Qwen2.5-7B-Instruct"\n}\n'
        'resource "helm_release" "stack" {\n  name  = "vllm"\n  chart = "vllm-stack"\n'
        '  values = [templatefile("${path.module}/manifests/values.yaml.tftpl", { model = var.model })]\n}\n'
    )
    result = _repo(tmp_path, tf, values, "values.yaml.tftpl")
    assert [r.deployment.model.value for r in result.deployments] == ["Qwen/Qwen2.5-7B-Instruct"]


def test_a_plain_yaml_file_is_left_to_be_linted_on_its_own(tmp_path):
    tf = 'resource "kubernetes_manifest" "m" {\n  manifest = yamldecode(file("${path.module}/manifests/vllm.yaml"))\n}\n'
    (tmp_path / ".git").mkdir()
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "vllm.yaml").write_text(_TEMPLATE)
    (tmp_path / "main.tf").write_text(tf)
    result = read_and_lint(str(tmp_path / "main.tf"), Settings(), "main.tf")
    assert not isinstance(result, str) and not result.deployments and not result.findings
