"""Node pools from the repository's cluster definition: read, matched to workloads, and bounded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES

from kvlint.extract.kinds import node_pools_tf
from kvlint.link import landing, pools
from kvlint.load import load_bytes
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

POOLS = FIXTURES / "pools"


def _pools(folder: str) -> dict[str, pools.Pool]:
    return {p.name: p for p in pools.repository_pools(str(POOLS / folder))}


def _lint(path: Path, display: str | None = None):
    result = read_and_lint(str(path), Settings(), display or str(path))
    assert not isinstance(result, str), result
    return result


def test_karpenter_family_and_size_give_the_instance_types_and_their_gpu():
    pool = _pools("karpenter")["gpu"]
    assert pool.instance_types == ("g6.xlarge", "g6.2xlarge", "g6.4xlarge", "g6.12xlarge")
    assert {g for g, _n in pool.gpus} == {"l4"}
    assert pool.gpus_per_node == 4  # g6.12xlarge
    assert pool.max_gpus == 8
    assert pool.labels["NodeGroupType"] == "GPU" and pool.labels["karpenter.sh/nodepool"] == "gpu"
    assert pool.taints == (("nvidia.com/gpu", "", "NoSchedule"),)


def test_eksctl_groups_managed_and_unmanaged():
    found = _pools("eksctl")
    assert found["ng1-public"].has_gpu is False  # m5.xlarge
    gpu = found["gpu"]
    assert gpu.gpus == (("a10g", 4),) and gpu.max_nodes == 2
    assert gpu.labels["eks.amazonaws.com/nodegroup"] == "gpu"


def test_gke_accelerator_labels_and_taints_the_pool():
    pool = _pools("gke")["containernodepool-sample-basic"]
    assert pool.gpus == (("t4", 1),) and pool.max_nodes == 3
    assert pool.labels["cloud.google.com/gke-accelerator"] == "nvidia-tesla-t4"
    assert ("nvidia.com/gpu", "present", "NoSchedule") in pool.taints


def test_cluster_api_machine_deployment_follows_its_template():
    pool = _pools("capi")["gpu-md-0"]
    assert pool.instance_types == ("p4d.24xlarge",)
    assert pool.gpus_per_node == 8 and pool.max_nodes == 2


def test_openshift_machineset_instance_type():
    pool = _pools("openshift")["cluster-name-gpu"]
    assert pool.gpus == (("t4", 1),) and pool.labels == {"node-role.kubernetes.io/gpu": ""}


def test_terraform_module_map_and_resource_blocks():
    found = _pools("terraform")
    assert found["l4"].gpus == (("l4", 1),) and found["l4"].max_nodes == 4
    assert found["l4"].taints == (("nvidia.com/gpu", "true", "NoSchedule"),)
    assert found["a10g"].gpus == (("a10g", 1),) and found["a10g"].max_nodes == 2
    assert found["a10g"].where.line == 27  # the resource block's line in eks.tf


def test_terraform_google_and_azure_pools_and_computed_values():
    tf = """
resource "google_container_node_pool" "gpu" {
  name = "gpu-pool"
  node_config {
    machine_type = "g2-standard-8"
    labels = { team = "llm" }
  }
  autoscaling { max_node_count = 5 }
}
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name = "gpu"
  vm_size = "Standard_NC24ads_A100_v4"
  node_taints = ["sku=gpu:NoSchedule"]
  max_count = 3
}
resource "aws_eks_node_group" "computed" {
  instance_types = [var.gpu_type]
}
"""
    found = {p.name: p for p in node_pools_tf.read(tf, "main.tf")}
    assert found["gpu-pool"].gpus == (("l4", 1),) and found["gpu-pool"].max_nodes == 5
    assert found["gpu-pool"].labels["cloud.google.com/gke-accelerator"] == "nvidia-l4"
    assert found["gpu"].taints == (("sku", "gpu", "NoSchedule"),)
    assert found["gpu"].gpus_per_node == 1
    assert found["computed"].instance_types == () and found["computed"].has_gpu is None


def test_arm_template_agent_pools():
    arm = """{"resources": [{"type": "Microsoft.ContainerService/managedClusters", "name": "aks",
      "properties": {"agentPoolProfiles": [
        {"name": "system", "vmSize": "Standard_D4s_v5", "count": 3},
        {"name": "gpu", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 4, "nodeTaints": ["sku=gpu:NoSchedule"]}]}}]}"""
    found = {p.name: p for p in node_pools_tf.read_arm(arm, "aks.json")}
    assert found["system"].has_gpu is False
    assert found["gpu"].gpus == (("t4", 1),) and found["gpu"].max_nodes == 4


def test_one_matching_pool_gives_its_gpu_and_the_finding_names_it():
    result = _lint(POOLS / "karpenter" / "vllm.yaml", "k/vllm.yaml")
    (r,) = result.deployments
    assert r.gpu is not None and r.gpu.id == "l4"
    assert r.plan is not None
    kv103 = [f for f in result.findings if f.rule == "KV103"]
    assert kv103 and any("Karpenter NodePool 'gpu' (k/nodepool.yaml:5)" in d for d in kv103[0].details)


def test_several_gpu_pools_are_checked_like_a_fleet():
    result = _lint(POOLS / "terraform" / "vllm.yaml")
    kv002 = [f for f in result.findings if f.rule == "KV002"]
    assert kv002 and "give 2 GPU types: checked on each" in kv002[0].message


def test_taint_not_tolerated_keeps_the_pool_out():
    pool = _pools("eksctl")["gpu"]
    doc = load_bytes(
        b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: {workload: llm}\n"
        b"  containers: [{name: c, image: x, resources: {limits: {example.com/gpu: 1}}}]\n",
        "p.yaml",
        1 << 20,
    ).documents[0]
    from kvlint.extract.kinds.node_pools import placement

    labels, tolerations = placement(doc.root.map("spec"), "p.yaml")
    assert not landing.tolerated(pool.taints[0], tolerations, set())
    assert landing.tolerated(pool.taints[0], tolerations, {"nvidia.com/gpu"})  # ExtendedResourceToleration
    assert all(landing.selector_met(pool, k, v) for k, v in labels)


def test_pools_without_gpu_are_said():
    result = _lint(POOLS / "nogpu" / "vllm.yaml")
    (kv002,) = [f for f in result.findings if f.rule == "KV002"]
    assert "the node pools it can land on have none" in kv002.message and "ng3-public" in kv002.message


def test_no_repository_root_reads_no_pools(tmp_path):
    (tmp_path / "nodepool.yaml").write_bytes((POOLS / "karpenter" / "nodepool.yaml").read_bytes())
    (tmp_path / "vllm.yaml").write_bytes((POOLS / "karpenter" / "vllm.yaml").read_bytes())
    # no .git nor .kvlint.yaml above (tmp_path sits under the system temp folder): nothing is read
    assert pools.root_of(str(tmp_path / "vllm.yaml")) is None
    assert pools.pools_for(str(tmp_path / "vllm.yaml"), "vllm.yaml") == ()
    (r,) = _lint(tmp_path / "vllm.yaml").deployments
    assert r.gpu is None


def test_walk_skips_symlinks_nested_repositories_and_hidden_folders(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "nodepool.yaml").write_bytes((POOLS / "karpenter" / "nodepool.yaml").read_bytes())
    os.symlink(outside, repo / "linked")
    os.symlink(outside / "nodepool.yaml", repo / "linked.yaml")
    nested = repo / "vendor-repo"
    (nested / ".git").mkdir(parents=True)
    (nested / "nodepool.yaml").write_bytes((POOLS / "karpenter" / "nodepool.yaml").read_bytes())
    (repo / ".hidden").mkdir()
    (repo / ".hidden" / "nodepool.yaml").write_bytes((POOLS / "karpenter" / "nodepool.yaml").read_bytes())
    assert pools.repository_pools(str(repo)) == ()
    (repo / "infra").mkdir()
    (repo / "infra" / "nodepool.yaml").write_bytes((POOLS / "karpenter" / "nodepool.yaml").read_bytes())
    pools.repository.cache_clear()
    assert [p.name for p in pools.repository_pools(str(repo))] == ["gpu"]


def test_walk_is_bounded_by_file_count(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for i in range(5):
        (repo / f"a{i}.yaml").write_text("x: 1\n")
    (repo / "z.yaml").write_bytes((POOLS / "karpenter" / "nodepool.yaml").read_bytes())
    monkeypatch.setattr(pools, "FILES_MAX", 3)
    assert pools.repository.__wrapped__(str(repo)).pools == ()


def test_hcl_parser_loads_only_when_a_tf_file_is_read():
    code = (
        "import sys; from kvlint.run import lint; "
        "from kvlint.cli import main; assert 'hcl2' not in sys.modules, 'hcl2 imported eagerly'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_nearest_folder_with_a_pool_it_lands_on_gives_the_gpu(tmp_path):
    """A repository of several clusters: the workload takes the pools of the closest folder that has
    one it can land on (a GPU-less pool nearer by does not hide the GPU pool further up)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "nodepools").mkdir()
    (repo / "nodepools" / "gpu.yaml").write_bytes((POOLS / "karpenter" / "nodepool.yaml").read_bytes())
    (repo / "examples" / "cpu").mkdir(parents=True)
    (repo / "examples" / "cpu" / "cluster.yaml").write_bytes((POOLS / "nogpu" / "cluster.yaml").read_bytes())
    (repo / "examples" / "gpu").mkdir()
    (repo / "examples" / "gpu" / "vllm.yaml").write_bytes((POOLS / "karpenter" / "vllm.yaml").read_bytes())
    (r,) = _lint(repo / "examples" / "gpu" / "vllm.yaml").deployments
    assert r.gpu is not None and r.gpu.id == "l4"


def test_terraform_carries_karpenter_node_pools():
    """The data-addons karpenter-resources values (ai-on-eks's shape) and kubectl_manifest NodePools
    (yamlencode, heredoc) are read as the NodePools they render."""
    found = _pools("terraform-karpenter")
    g5 = found["g5-gpu-karpenter"]
    assert {g for g, _n in g5.gpus} == {"a10g"} and g5.gpus_per_node == 4  # g5.12xlarge
    assert g5.labels["NodeGroupType"] == "g5-gpu-karpenter" and g5.labels["type"] == "karpenter"
    assert g5.taints == (("nvidia.com/gpu", "Exists", "NoSchedule"),)
    assert (g5.where.file, g5.where.line) == ("addons.tf", 14)  # the values' first line in the heredoc
    assert found["x86-cpu-karpenter"].has_gpu is False  # family m5: the catalog lists none, no accelerator
    assert {g for g, _n in found["gpu-nodepool"].gpus} == {"l40s"}  # yamlencode({...}), family g6e
    l4 = found["${var.pool_name}-l4"]  # a heredoc: a placeholder stays its text
    assert l4.gpus == (("l4", 1),) and (l4.where.file, l4.where.line) == ("nodepool.tf", 29)


def test_ray_workers_placement_picks_the_pool_not_the_heads():
    result = _lint(POOLS / "terraform-karpenter" / "ray-service-vllm.yaml", "r/ray-service-vllm.yaml")
    (r,) = result.deployments
    assert r.gpu is not None and r.gpu.id == "a10g" and r.plan is not None
    assert r.deployment.gpu is not None and "g5-gpu-karpenter" in (r.deployment.gpu.note or "")
    assert "r/addons.tf:14" in (r.deployment.gpu.note or "")


def test_an_unknown_karpenter_family_is_not_taken_for_no_gpu():
    from kvlint.extract.kinds.node_pools import carries_no_gpu

    assert carries_no_gpu("m5") and carries_no_gpu("c6i")
    assert not carries_no_gpu("g5") and not carries_no_gpu("p9") and not carries_no_gpu("inf2")


def test_nimservice_node_selector_picks_its_karpenter_pool():
    # the NIM operator copies spec.nodeSelector / tolerations to the pod: they decide the pool
    (r,) = _lint(POOLS / "nimservice" / "nim-service.yaml", "n/nim-service.yaml").deployments
    assert r.gpu is not None and r.gpu.id == "a10g"
    assert "g5-gpu-karpenter" in (r.deployment.gpu.note or "")
    result = _lint(POOLS / "nimservice" / "nim-service-cpu.yaml")
    (cpu,) = result.deployments
    assert cpu.gpu is None and cpu.plan is None
    assert any("have none" in f.message for f in result.findings if f.rule == "KV002")


def test_production_stack_values_land_on_the_pool_they_tolerate():
    # the chart gives the pod servingEngineSpec.tolerations and requests nvidia.com/gpu: the GKE GPU pool
    # (machine and accelerator from variable defaults) is met; the AKS pool's sku=gpu taint is not
    (r,) = _lint(POOLS / "production-stack" / "values.yaml", "p/values.yaml").deployments
    d = r.deployment
    assert d.gpus_per_pod is not None and d.gpus_per_pod.note == "nvidia.com/gpu"
    assert r.gpu is not None and r.gpu.id == "l4" and d.gpu_candidates is None
    assert "production-stack-node-pool" in (d.gpu.note or "") and "gpupool" not in (d.gpu.note or "")
    assert r.plan is not None


def test_production_stack_override_policy_replaces_the_global_tolerations():
    doc = load_bytes(
        b"servingEngineSpec:\n  tolerations: [{key: a, operator: Exists}]\n  modelSpec:\n"
        b"  - {name: m, repository: vllm/vllm-openai, modelURL: facebook/opt-125m, requestGPU: 1,\n"
        b"     tolerationsPolicy: override, tolerations: [{key: b, operator: Exists}]}\n"
        b"  - {name: n, repository: vllm/vllm-openai, modelURL: facebook/opt-125m, requestGPU: 1,\n"
        b"     tolerations: [{key: b, operator: Exists}]}\n",
        "v.yaml",
        1 << 20,
    ).documents[0]
    from kvlint.extract.kinds import helm_values

    first, second = helm_values.extract(doc.root, "v.yaml", "", [])
    assert [t["key"] for t in first.placement.value[1]] == ["b"]
    assert [t["key"] for t in second.placement.value[1]] == ["a", "b"]


def test_gke_module_node_pools_give_their_accelerator_labels_and_taints():
    found = _pools("gke-module")
    gpu, cpu = found["gpu-pool"], found["cpu-pool"]
    assert gpu.gpus == (("l4", 1),) and gpu.max_nodes == 3 and gpu.where.line == 14
    assert gpu.labels["workload-type"] == "gpu" and gpu.labels["cloud.google.com/gke-nodepool"] == "gpu-pool"
    assert ("dedicated", "llm", "NoSchedule") in gpu.taints
    assert cpu.has_gpu is False and not any(t[0] == "dedicated" for t in cpu.taints)
    (r,) = _lint(POOLS / "gke-module" / "vllm.yaml").deployments
    assert r.gpu is not None and r.gpu.id == "l4"
    # no toleration of the GPU pool's own taint: only the CPU pool is left, and no GPU is given
    result = _lint(POOLS / "gke-module" / "vllm-untolerated.yaml")
    (bare,) = result.deployments
    assert bare.gpu is None and any("have none" in f.message for f in result.findings if f.rule == "KV002")
