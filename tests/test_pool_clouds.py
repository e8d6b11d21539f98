"""A repository that keeps several clusters, one folder per cloud: a workload under one cloud's folder is
not given another cloud's node pools (link/clouds.py), and a GPU request whose note names its resource
tolerates that resource's taint (link/landing.py requested_resources)."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES

from kvlint.deployment import Deployment, stated
from kvlint.findings import Location
from kvlint.link import clouds, landing, pools
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

KARPENTER = FIXTURES / "pools" / "karpenter"


def _repo(tmp_path: Path, workload_dir: str) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    pool_dir = tmp_path / "providers" / "aws" / "eks"
    pool_dir.mkdir(parents=True)
    (pool_dir / "nodepool.yaml").write_bytes((KARPENTER / "nodepool.yaml").read_bytes())
    here = tmp_path / workload_dir
    here.mkdir(parents=True)
    (here / "vllm.yaml").write_bytes((KARPENTER / "vllm.yaml").read_bytes())
    return here / "vllm.yaml"


def _gpu(path: Path):
    result = read_and_lint(str(path), Settings(), str(path))
    assert not isinstance(result, str), result
    (d,) = result.deployments
    return d.gpu.id if d.gpu is not None else None


def test_another_clouds_pools_are_not_given(tmp_path):
    path = _repo(tmp_path, "providers/google-cloud/gke/apps")
    assert _gpu(path) is None
    assert pools.pools_for(str(path), "vllm.yaml") == ()


def test_the_same_clouds_and_a_cloudless_folders_pools_are(tmp_path):
    assert _gpu(_repo(tmp_path / "a", "providers/aws/eks/apps")) == "l4"
    assert _gpu(_repo(tmp_path / "b", "apps/llm")) == "l4"  # its folders name no cloud


def test_a_path_naming_two_clouds_names_none():
    assert clouds.of_path("aws/gke/x.yaml") is None
    assert clouds.of_path("cloud-service-providers/azure/aks/values.yaml") == "azure"
    assert clouds.of_path("x.yaml") is None  # a file's own name is not a folder
    assert clouds.of_pool("Karpenter NodePool", "gcp/nodepool.yaml") == "aws"  # the kind first
    assert clouds.of_pool("OpenShift MachineSet", "infra/gcp/ms.yaml") == "gcp"


def test_the_resource_a_gpu_count_names_is_tolerated():
    where = Location("x.yaml", 1, 1)
    for resource, note, expected in (
        ("nvidia.com/gpu", "resources nvidia.com/gpu", {"nvidia.com/gpu"}),
        ("amd.com/gpu", "amd.com/gpu", {"amd.com/gpu"}),
        (None, "`gpus`: the chart's GPU count key", set(landing.GPU_RESOURCES)),  # a GPU, vendor not said
        (None, "a note naming amd.com/gpu", set(landing.GPU_RESOURCES)),  # a note is prose, never read
    ):
        d = Deployment(file="x.yaml", where=where, kind="Deployment")
        d.gpus_per_pod, d.gpu_resource = stated(1, where, note), resource
        assert landing.requested_resources(d) == expected, note
    none = Deployment(file="x.yaml", where=where, kind="Deployment")
    none.gpus_per_pod, none.gpu_resource = stated(0, where, "nvidia.com/gpu"), "nvidia.com/gpu"
    assert landing.requested_resources(none) == set()
    taint = ("nvidia.com/gpu", "true", "NoSchedule")
    assert landing.tolerated(taint, [], {"nvidia.com/gpu"}) and not landing.tolerated(taint, [], set())
