"""MIG slices and shared GPUs: what the engine sees, read from the ways clusters hand them out."""

from __future__ import annotations

from conftest import FIXTURES, lint

from kvlint.catalog import gpus, mig

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{{labels}}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"{args}]
          resources:
            limits: {{{limits}}}
"""


def deploy(labels: str = "", limits: str = "nvidia.com/gpu: 1", args: str = ""):
    return lint(DEPLOY.format(labels=labels, limits=limits, args=args))


def test_slice_memory_is_the_slice_not_the_card():
    s = gpus.lookup("a100-80gb:1g.10gb")
    assert s is not None and s.mig_profile == "1g.10gb" and s.parent == "a100-80gb-sxm"
    assert s.engine_bytes == int(9.5 * 2**30) and "lgip" in s.engine_bytes_source
    assert gpus.lookup("NVIDIA-H100-80GB-HBM3-MIG-3g.40gb").engine_bytes == int(39.5 * 2**30)
    b200 = gpus.lookup("b200:1g.23gb")
    assert b200.engine_bytes == 23 * 10**9 and "profile name" in b200.engine_bytes_source  # marketed only
    assert gpus.lookup("a100-80gb:1g.5gb") is None  # a 40GB-card profile


def test_every_profile_in_the_table_has_a_source_and_a_parent_in_the_catalog():
    for fam in mig._data()["families"].values():
        for parent in fam["parents"]:
            assert gpus.by_id(parent) is not None, parent
        for prof, entry in fam["profiles"].items():
            assert mig.normalise(prof) == prof and entry["source"], prof
            spec = gpus.slice_spec(fam["parents"][0], prof)
            parent = gpus.by_id(fam["parents"][0])
            assert spec is not None and 0 < spec.engine_bytes < parent.engine_bytes + 2**30, (prof, spec)


def test_mixed_strategy_resource_on_a_labelled_card():
    r = deploy("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "nvidia.com/mig-3g.40gb: 1")
    (d,) = r.deployments
    assert d.gpu.id == "a100-80gb-sxm:3g.40gb" and d.deployment.gpus.value == 1


def test_mixed_strategy_without_a_card_takes_the_smallest_slice_of_that_name():
    r = deploy("", "nvidia.com/mig-1g.10gb: 1")
    (d,) = r.deployments
    assert d.gpu.id == "a100-80gb-sxm:1g.10gb"  # 9.50 GiB on an A100-80GB < 9.75 on an H100
    assert "the card is not stated" in d.deployment.gpu.note


def test_gke_partition_size_label():
    r = deploy(
        "cloud.google.com/gke-accelerator: nvidia-tesla-a100, cloud.google.com/gke-gpu-partition-size: 1g.5gb"
    )
    (d,) = r.deployments
    assert d.gpu.id == "a100-40gb-sxm:1g.5gb"
    assert any(f.rule == "KV101" for f in r.findings)  # 14 GiB of weights in 4.75 GiB


def test_profile_the_card_does_not_have_is_kv002_not_the_whole_card():
    r = deploy("nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3", "nvidia.com/mig-1g.5gb: 1")
    (f,) = [f for f in r.findings if f.rule == "KV002"]
    assert "1g.5gb does not exist on NVIDIA H100 SXM5 80GB" in f.message and "Pending" in f.message
    assert not any(f.rule == "KV101" for f in r.findings)


def test_tp_over_slices_is_kv209_and_kv101_suggests_no_tp():
    r = deploy("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "nvidia.com/mig-1g.10gb: 2", ', "-tp", "2"')
    rules = {f.rule for f in r.findings}
    assert "KV209" in rules
    (k,) = [f for f in r.findings if f.rule == "KV101"] or [None]
    if k is not None:
        assert "tensor-parallel" not in (k.fix or "") and "larger MIG profile" in k.fix


def test_gaudi_is_named_not_modelled():
    r = deploy("", "habana.ai/gaudi: 1")
    (f,) = [f for f in r.findings if f.rule == "KV004"]
    assert "Intel Gaudi" in f.message and "HPU" in f.message


def test_amd_mi300x_and_b200_instance_fixtures_name_their_cards():

    from kvlint.run.lint import read_and_lint
    from kvlint.run.settings import Settings

    for name, gpu, count in (
        ("good-mi300x-llama-70b.yaml", "mi300x", 1),
        ("bad-b200-instance-235b.yaml", "b200", 1),
        ("good-b200-instance-tp4.yaml", "b200", 4),
    ):
        r = read_and_lint(str(FIXTURES / "KV101" / name), Settings(), name)
        (d,) = r.deployments
        assert d.gpu is not None and d.gpu.id == gpu and d.deployment.gpus.value == count, name


def test_a_label_value_no_node_carries_is_a_warning_with_the_closest_real_value():
    r = deploy("nvidia.com/gpu.product: NVIDIA-H100-SXM4-80GB")
    (f,) = [f for f in r.findings if f.rule == "KV002"]
    assert (
        "no node carries nvidia.com/gpu.product=NVIDIA-H100-SXM4-80GB" in f.message and "Pending" in f.message
    )
    assert f.fix == "use NVIDIA-H100-80GB-HBM3"
    r = deploy("cloud.google.com/gke-accelerator: nvidia-L4")  # labels match exactly, case included
    (f,) = [f for f in r.findings if f.rule == "KV002"]
    assert "closest real value: nvidia-l4" in f.message and "checks capacity on NVIDIA L4" in f.message
    for ok in (
        "nvidia.com/gpu.product: NVIDIA-A10G-SHARED",
        "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-1g.10gb",
    ):
        assert not [f for f in deploy(ok).findings if f.rule == "KV002"], ok


def test_plan_accepts_a_mig_profile_and_suggests_no_tp_over_slices():
    from click.testing import CliRunner

    from kvlint.cli import main

    ok = CliRunner().invoke(main, ["plan", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "a100-80gb:3g.40gb"])
    assert ok.exit_code == 0, ok.output
    assert "MIG 3g.40gb (39.25 GiB as the engine sees it)" in ok.output
    big = CliRunner().invoke(
        main, ["plan", "meta-llama/Llama-3.3-70B-Instruct", "--gpu", "a100-80gb:3g.40gb"]
    )
    assert "x NVIDIA A100 80GB SXM4 MIG 3g.40gb (tensor_parallel" not in big.output


UNRENAMED = (FIXTURES / "sharing" / "time-sliced-unrenamed.yaml").read_text()


def test_time_slicing_that_keeps_the_name_shares_plain_gpu_pods():
    """renameByDefault false: the replicas are advertised as nvidia.com/gpu, so pods asking for it
    share cards; 3 x 0.9 on one card is reported."""
    (kv208,) = [f for f in lint(UNRENAMED).findings if f.rule == "KV208"]
    assert "3 pods on one shared GPU" in kv208.message and "= 2.70" in kv208.message
    assert "keeps the name nvidia.com/gpu" in kv208.message


def test_renamed_or_single_pods_are_not_summed():
    renamed = UNRENAMED.replace("      timeSlicing:\n", "      timeSlicing:\n        renameByDefault: true\n")
    assert not [f for f in lint(renamed).findings if f.rule == "KV208"]  # plain nvidia.com/gpu: whole cards
    single = UNRENAMED.replace("  replicas: 3\n", "  replicas: 1\n")
    assert not [f for f in lint(single).findings if f.rule == "KV208"]
