"""`kvlint init`: the fleet found in the repository's node pools or in a `kubectl get nodes -o json`
dump is written as `.kvlint.yaml`, and using it turns "GPU type is not stated" into plans.

tests/data/init/nodes.json is hand-written in the shape `kubectl get nodes -o json` prints (a v1
List of Nodes: Kubernetes API reference "Node v1 core"), with label values real nodes carry:
- GKE: `cloud.google.com/gke-accelerator: nvidia-l4` and `node.kubernetes.io/instance-type:
  g2-standard-8` (GKE docs "About GPUs in GKE", cloud.google.com/kubernetes-engine/docs/concepts/gpus;
  G2 machines carry L4s, cloud.google.com/compute/docs/gpus#l4-gpus), `cloud.google.com/gke-nodepool`;
- EKS: `eks.amazonaws.com/nodegroup`, `node.kubernetes.io/instance-type: p4d.24xlarge` / `g5.2xlarge`
  (kubernetes.io/docs/reference/labels-annotations-taints/#nodekubernetesioinstance-type), and on the
  p4d node the GPU feature discovery labels `nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB`,
  `nvidia.com/gpu.count: 8` (NVIDIA k8s-device-plugin docs/gpu-feature-discovery/README.md,
  "Generated Labels": the product name as nvidia-smi prints it, spaces as '-');
- a CPU node (e2-standard-4, m5.xlarge) with no GPU capacity, and one GPU node whose instance type
  kvlint does not know (a note, not a fleet entry).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, ROOT

from kvlint.cli import main

DATA = ROOT / "tests" / "data" / "init"
NODES = DATA / "nodes.json"
UPDATE = bool(os.environ.get("KVLINT_UPDATE_SNAPSHOTS"))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository with a Karpenter GPU NodePool and a vLLM Deployment naming no GPU, no configuration."""
    for name in ("nodepool.yaml", "vllm.yaml"):
        shutil.copy(FIXTURES / "pools" / "karpenter" / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("KVLINT_MODELS_DIR", str(tmp_path / "no-pulled-models"))
    return tmp_path


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _report(*args: str) -> dict:
    return json.loads(_run("--format", "json", "--exit-zero", *args).stdout)


def _findings(*args: str) -> list[dict]:
    return _report(*args)["findings"]


def _not_stated(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "KV002" and f["message"].startswith("GPU type is not stated")]


def _snapshot(name: str, text: str) -> None:
    snap = DATA / name
    if UPDATE:
        snap.write_text(text, encoding="utf-8", newline="\n")
    assert snap.read_text(encoding="utf-8") == text, f"{snap.name} changed: KVLINT_UPDATE_SNAPSHOTS=1"


def test_init_from_node_pools_turns_gpu_not_stated_into_plans(repo):
    before = _report("vllm.yaml")
    assert _not_stated(before["findings"]), before["findings"]
    assert [d["gpu"] for d in before["deployments"]] == [None]  # nothing planned: no GPU

    result = _run("init")
    assert result.exit_code == 0, result.output
    written = (repo / ".kvlint.yaml").read_text()
    assert "fleet:\n  - l4  # NVIDIA L4: nodepool.yaml:5: Karpenter NodePool 'gpu'" in written
    _snapshot("pools.kvlint.yaml", written)

    after = _report("vllm.yaml")
    assert not _not_stated(after["findings"]), after["findings"]
    assert [d["gpu"] for d in after["deployments"]] == ["l4"]
    kv103 = [f for f in after["findings"] if f["rule"] == "KV103"]  # planned: the KV cache checked
    assert kv103 and "KV-cache pool per GPU" in json.dumps(kv103)


def test_init_from_a_nodes_dump_gives_the_fleet_and_plans_on_each(repo):
    (repo / "nodepool.yaml").unlink()  # the cluster is known only from the dump
    assert _not_stated(_findings("vllm.yaml"))

    result = _run("init", "--nodes", str(NODES))
    assert result.exit_code == 0, result.output
    written = (repo / ".kvlint.yaml").read_text()
    entries = [line.split("#")[0].strip() for line in written.splitlines() if line.startswith("  - ")]
    assert entries == ["- l4", "- a100-40gb-sxm", "- a10g"]  # GKE label, GFD product label, instance type
    assert (
        f"{NODES}:12: node gke-serving-gpu-pool-6f2b1c3a-x7kq, cloud.google.com/gke-accelerator=nvidia-l4"
        in written
    )
    assert "x9.fictional" not in written and "ip-10-0-50-3" in result.stderr  # unknown GPU: a note
    _snapshot("nodes.kvlint.yaml", written.replace(str(NODES), "tests/data/init/nodes.json"))

    after = _findings("vllm.yaml")
    kv002 = [f for f in after if f["rule"] == "KV002"]
    assert kv002 and "checked on each GPU of the fleet" in kv002[0]["message"], kv002
    assert all(name in kv002[0]["message"] for name in ("L4", "A100 40GB", "A10G"))

    shown = _run("config")
    fleet_line = next(line for line in shown.stdout.splitlines() if line.startswith("fleet "))
    assert "l4, a100-40gb-sxm, a10g" in fleet_line and ".kvlint.yaml:4:1" in fleet_line


def test_init_refuses_to_overwrite_without_force(repo):
    (repo / ".kvlint.yaml").write_text("select: [KV1]\n")
    result = _run("init")
    assert result.exit_code == 1
    assert ".kvlint.yaml exists; not overwritten (pass --force" in result.stderr
    assert (repo / ".kvlint.yaml").read_text() == "select: [KV1]\n"
    assert _run("init", "--force").exit_code == 0
    assert "fleet:" in (repo / ".kvlint.yaml").read_text()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "missing.json: cannot read: No such file or directory"),
        ('{"kind": "List", "items": [\n', "bad.json:2:1: YAML syntax error"),
        ('{"kind": "Pod", "metadata": {}}\n', "bad.json:1:1: not the output of `kubectl get nodes -o json`"),
        ('{"kind": "List", "items": []}\n', "no GPU kvlint knows in the node list; nothing written"),
        (b"\xff\xfe\x00garbage", "bad.json"),
    ],
)
def test_a_bad_nodes_file_is_a_located_message_and_exit_1(repo, content, expected):
    name = "missing.json" if content is None else "bad.json"
    if isinstance(content, bytes):
        (repo / name).write_bytes(content)
    elif content is not None:
        (repo / name).write_text(content)
    result = _run("init", "--nodes", name)
    assert result.exit_code == 1, result.output
    assert expected in result.stderr and "Traceback" not in result.output
    assert not (repo / ".kvlint.yaml").exists()


def test_a_directory_as_nodes_file_is_exit_1(repo):
    result = _run("init", "--nodes", ".")
    assert result.exit_code == 1 and "cannot read" in result.stderr


def test_init_with_no_gpu_pool_writes_nothing(repo):
    (repo / "nodepool.yaml").unlink()
    result = _run("init")
    assert result.exit_code == 1 and "nothing written" in result.stderr
    assert not (repo / ".kvlint.yaml").exists()


def test_a_path_that_does_not_exist_is_exit_1(repo):
    result = _run("init", "nowhere")
    assert result.exit_code == 1 and "nowhere: no such file or directory" in result.stderr


def test_a_written_file_is_one_comment_line_per_entry_whatever_the_pool_name(repo):
    text = (
        (repo / "nodepool.yaml")
        .read_text()
        .replace("name: gpu\n", 'name: "gpu\\nselect: [KV9]\\u001b[31m"\n', 1)
    )
    (repo / "nodepool.yaml").write_text(text)
    assert _run("init").exit_code == 0
    written = (repo / ".kvlint.yaml").read_text()
    assert "\nselect" not in written and "\x1b" not in written
    assert _run("config").exit_code == 0


def test_the_written_file_is_valid_configuration(repo):
    _run("init", "--nodes", str(NODES))
    assert _run("config").exit_code == 0
    assert Path(".kvlint.yaml").is_file()


def test_dry_run_prints_and_writes_nothing(repo):
    (repo / ".kvlint.yaml").write_text("select: [KV1]\n")
    result = _run("init", "--dry-run")
    assert result.exit_code == 0 and result.stdout.startswith("# Written by `kvlint init`")
    assert (repo / ".kvlint.yaml").read_text() == "select: [KV1]\n"


def test_a_file_path_reads_only_that_files_pools(repo):
    shutil.copy(FIXTURES / "pools" / "gke" / "nodepool.yaml", repo / "gke.yaml")
    both = _run("init", "--dry-run").stdout
    assert "  - l4  #" in both and "  - t4  #" in both
    one = _run("init", "--dry-run", "gke.yaml").stdout
    assert (
        "  - t4  # NVIDIA T4: gke.yaml:4: GKE ContainerNodePool" in one and "l4" not in one.split("fleet:")[1]
    )
