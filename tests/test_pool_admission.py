"""Placement that admission adds (Kueue ResourceFlavors, HardwareProfiles) and node pools written in
shell-script here-documents: what link/admission.py and load/heredoc.py give link/pools.py."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES

from kvlint.extract.kinds.node_pools import Pool
from kvlint.findings import Location
from kvlint.link import landing, pools
from kvlint.load.heredoc import heredocs
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

POOLS = FIXTURES / "pools"


def _lint(path: Path, display: str | None = None):
    result = read_and_lint(str(path), Settings(), display or str(path))
    assert not isinstance(result, str), result
    return result


def _gpu_note(result) -> str:
    (r,) = result.deployments
    assert r.deployment.gpu is not None, "no GPU placed"
    return str(r.deployment.gpu.note)


def test_heredoc_bodies_keep_their_script_lines():
    script = (
        "cat <<EOF | kubectl apply -f -\nkind: A\nEOF\n"  # body on line 1 (0-based)
        "cat <<< 'here-string, not a body'\n"
        "cat <<-'END' # quoted, tabs stripped\n\tkind: B\n\tEND\n"
        'cat <<"X"\nx: 1\n'  # unterminated: runs to the end
    )
    assert heredocs(script) == [(1, "kind: A"), (5, "kind: B"), (8, "x: 1")]


def test_a_pool_in_a_script_heredoc_is_read_at_its_script_line():
    (pool,) = pools.repository_pools(str(POOLS / "heredoc"))
    assert (pool.name, pool.where.file, pool.where.line) == ("gpu", "install-node-pool-gpu.sh", 7)
    assert pool.gpus == (("a10g", 1),)
    result = _lint(POOLS / "heredoc" / "vllm.yaml", "h/vllm.yaml")
    assert "Karpenter NodePool 'gpu' (h/install-node-pool-gpu.sh:7)" in _gpu_note(result)
    assert result.deployments[0].plan is not None


def test_kueue_flavor_tolerations_admit_a_queued_workload_onto_the_tainted_pool():
    note = _gpu_note(_lint(POOLS / "kueue" / "vllm-queued.yaml", "q/vllm-queued.yaml"))
    assert "OpenShift MachineSet 'demo-gpu-us-east-2b' (q/cluster.yaml:5)" in note
    assert "Kueue ResourceFlavor 'gpu-l40s' (q/cluster.yaml:24) of LocalQueue 'lq-gpu'" in note
    (r,) = _lint(POOLS / "kueue" / "vllm-queued.yaml").deployments
    assert r.gpu is not None and r.gpu.id == "l40s" and r.plan is not None


def test_without_the_queue_label_the_taint_keeps_the_workload_off_the_pool():
    result = _lint(POOLS / "kueue" / "vllm-unqueued.yaml")
    (r,) = result.deployments
    assert r.deployment.gpu is None and r.deployment.node_pools is None
    assert [f.rule for f in result.findings] == ["KV002"]


def test_hardware_profile_node_scheduling_places_the_inference_service():
    note = _gpu_note(_lint(POOLS / "kueue" / "isvc-profile.yaml", "q/isvc-profile.yaml"))
    assert "admitted through HardwareProfile 'gpu-node' (q/cluster.yaml:68)" in note


def test_a_queue_with_two_gpu_flavors_lands_on_each_flavors_pool(tmp_path):
    (tmp_path / ".kvlint.yaml").write_text("{}\n")
    pool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {n}}}\nspec:\n  template:\n"
    pool += "    metadata: {{labels: {{tier: {n}}}}}\n    spec:\n      taints: [{{key: {n}, effect: NoSchedule}}]\n"
    pool += "      requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{t}]}}]\n"
    flavor = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {{name: {n}}}\n"
    flavor += "spec:\n  nodeLabels: {{tier: {n}}}\n  tolerations: [{{key: {n}, operator: Exists}}]\n"
    queue = (
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
        "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: a}, {name: b}]\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q, namespace: other}\n"
        "spec: {clusterQueue: none}\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q, namespace: ml}\n"
        "spec: {clusterQueue: cq}\n"
    )
    docs = [pool.format(n="a", t="g5.xlarge"), pool.format(n="b", t="g6.xlarge")]
    docs += [flavor.format(n="a"), flavor.format(n="b"), queue]
    (tmp_path / "cluster.yaml").write_text("---\n".join(docs))
    (tmp_path / "vllm.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w\n  namespace: ml\n"
        "  labels: {kueue.x-k8s.io/queue-name: q}\nspec:\n  template:\n    spec:\n      containers:\n"
        "      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n"
        "        args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '8192']\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (r,) = _lint(tmp_path / "vllm.yaml").deployments
    d = r.deployment
    assert d.gpu_candidates is not None and set(d.gpu_candidates.value) == {"a10g", "l4"}
    assert d.gpu_candidates.note.count("Kueue ResourceFlavor") == 2


def test_the_gpu_present_label_is_met_only_by_a_pool_that_may_carry_gpus():
    where = Location("c.yaml", 1, 1)
    cpu = Pool("cpu", "eksctl node group", where, instance_types=("m5.large",))
    gpu = Pool("gpu", "eksctl node group", where, instance_types=("g5.xlarge",), gpus=(("a10g", 1),))
    assert not landing.selector_met(cpu, "nvidia.com/gpu.present", ["true"])
    assert landing.selector_met(gpu, "nvidia.com/gpu.present", ["true"])


def test_a_cluster_queue_quota_is_not_taken_for_an_unread_workload():
    result = _lint(POOLS / "kueue" / "cluster.yaml")
    assert result.findings == []


def test_a_compute_class_gives_its_gpu_to_the_pod_that_selects_it():
    (pool,) = pools.repository_pools(str(POOLS / "computeclass"))
    assert (pool.kind, pool.name, pool.gpus) == ("GKE ComputeClass", "gpu-l4-24gb-s12-x1", (("l4", 1),))
    note = _gpu_note(_lint(POOLS / "computeclass" / "vllm.yaml", "c/vllm.yaml"))
    assert "GKE ComputeClass 'gpu-l4-24gb-s12-x1' (c/computeclass.yaml:4)" in note
    (r,) = _lint(POOLS / "computeclass" / "vllm-unselected.yaml").deployments
    assert r.deployment.node_pools is None  # the class's taint: only a pod selecting it is tolerated


def test_karpenter_instance_categories_alone_tell_gpu_from_no_gpu(tmp_path):
    (tmp_path / ".kvlint.yaml").write_text("{}\n")
    pool = (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {n}}}\nspec:\n  template:\n    spec:\n"
        "      requirements: [{{key: karpenter.k8s.aws/instance-category, operator: In, values: [{c}]}}]\n"
    )
    (tmp_path / "pools.yaml").write_text(
        "---\n".join([pool.format(n="cpu", c="c, m, r"), pool.format(n="gpu", c="g")])
    )
    found = {p.name: p for p in pools.repository_pools(str(tmp_path))}
    assert found["cpu"].has_gpu is False
    assert found["gpu"].has_gpu is None  # a g-family instance of a GPU kvlint cannot name


def test_the_flavors_of_the_group_covering_the_resource_the_pod_requests():
    """The queue's flavors are those of the resource group covering what the pod requests, by the resource
    names its GPU count gives (landing.requested_resources), not the count's note taken whole."""
    from kvlint.deployment import Deployment, stated
    from kvlint.link.admission import Admission, variants
    from kvlint.load import load_bytes

    text = (
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  resourceGroups:\n"
        "  - coveredResources: [cpu, memory]\n    flavors: [{name: cpu}]\n"
        "  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: gpu}]\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q}\nspec: {clusterQueue: cq}\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: cpu}\nspec: {nodeLabels: {t: c}}\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\nspec: {nodeLabels: {t: g}}\n"
    )
    adm = Admission()
    for doc in load_bytes(text.encode(), "q.yaml", 1 << 20).documents:
        adm.add(doc.root, "q.yaml")
    where = Location("x.yaml", 1, 1)
    d = Deployment(file="x.yaml", where=where, kind="Deployment")
    d.gpus_per_pod = stated(1, where, "resources nvidia.com/gpu")  # the nim-llm chart values' note
    (only,) = variants(adm, ("", "q", "", ""), landing.requested_resources(d))
    assert only.source.startswith("Kueue ResourceFlavor 'gpu' (q.yaml:") and only.labels == (("t", ("g",)),)
    both = variants(adm, ("", "q", "", ""), set())  # no resource known: every flavor of the queue
    assert len(both) == 2
