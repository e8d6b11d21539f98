"""vLLM on TPU with too few devices (tpu-inference cannot build its mesh), a pod asking more chips than its
slice has, the info summary per device, and the KV004s that fit a workload kvlint makes no plan for."""

from conftest import gpu_pod, lint
from test_vllm_tpu import tpu_pod

from kvlint.report import infos

LLAMA_8B = ["--model=meta-llama/Llama-3.1-8B-Instruct", "--max-model-len=8192", "--max-num-seqs=32"]


def test_tp_above_the_chips_requested_is_an_error_with_the_mesh_arithmetic():
    r = lint(
        tpu_pod("vllm/vllm-tpu:latest", [*LLAMA_8B, "--tensor-parallel-size=8"], "tpu-v6e-slice", "2x4", 4)
    )
    (f,) = [f for f in r.findings if f.rule == "KV201"]
    assert f.severity.name == "ERROR"
    assert "TP 8 x PP 1 = 8 chips, but one replica gets 4 chips" in f.message
    assert "found 4, expected 8 for mesh shape (1, 8)" in f.message and "GPU" not in f.message
    assert f.fix == "request 8 chips per replica, or set --tensor-parallel-size to 4"


def test_tp_over_too_few_tpu7x_chips_counts_tensorcores_and_asks_for_chips():
    r = lint(tpu_pod("vllm/vllm-tpu:latest", [*LLAMA_8B, "--tensor-parallel-size=16"], "tpu7x", "2x2x1", 4))
    (f,) = [f for f in r.findings if f.rule == "KV201"]
    assert "= 16 TensorCores, but one replica gets 8 TensorCores (4 chips x 2;" in f.message
    assert "found 8, expected 16" in f.message
    assert f.fix.startswith("request 8 chips (16 TensorCores) per replica")


def test_a_pod_asking_more_chips_than_its_topology_holds_is_never_scheduled():
    text = tpu_pod("vllm/vllm-tpu:latest", [*LLAMA_8B, "--tensor-parallel-size=8"], "tpu-v6e-slice", "2x2", 8)
    (f,) = [f for f in lint(text).findings if f.rule == "KV201"]
    assert (
        "a pod requests 8 chips (google.com/tpu), but topology 2x2 is a slice of 2 x 2 = 4 chips" in f.message
    )
    assert f.severity.name == "ERROR" and "google.com/tpu: 8" in text.splitlines()[f.where.line - 1]
    # the same request on a slice that holds it, with TP matching: nothing to say
    fits = lint(
        tpu_pod("vllm/vllm-tpu:latest", [*LLAMA_8B, "--tensor-parallel-size=8"], "tpu-v6e-slice", "2x4", 8)
    )
    assert not [f for f in fits.findings if f.rule == "KV201"]


def test_a_multi_host_v6e_slice_gives_a_pod_one_vms_four_chips():
    # Google's v6e table: 4x4 (16 chips) is a multi-host slice of ct6e-standard-4t VMs; 2x4 can be one 8-chip VM
    text = tpu_pod("vllm/vllm-tpu:latest", [*LLAMA_8B, "--tensor-parallel-size=8"], "tpu-v6e-slice", "4x4", 8)
    (f,) = [f for f in lint(text).findings if f.rule == "KV201"]
    assert (
        "4 x 4 = 16 chips on VMs of 4 (ct6e-standard-4t" in f.message and "no node of it has 8" in f.message
    )
    assert f.fix.startswith("request at most 4 chips per pod")
    # on TPU7x (no VM table kept) the slice bounds the pod: 4 chips (8 TensorCores, TP 8) on 2x2x2's 8 chips
    tpu7x = lint(
        tpu_pod("vllm/vllm-tpu:latest", [*LLAMA_8B, "--tensor-parallel-size=8"], "tpu7x", "2x2x2", 4)
    )
    assert not [f for f in tpu7x.findings if f.rule == "KV201"]


def test_the_info_summary_names_each_workloads_device():
    # Qwen2.5-7B has 4 KV heads: TP 8 replicates them on GPUs and on TPU chips alike (KV203)
    args = ["--model=Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size=8", "--max-model-len=8192"]
    on_tpu = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu-v6e-slice", "2x4", 8)).findings
    on_gpu = lint(gpu_pod("vllm/vllm-openai:v0.10.1", args, gpus=8)).findings
    lines = [line for line in infos.block([*on_tpu, *on_gpu, *on_gpu], None) if "KV203" in line]
    assert lines == [
        "  2 KV203 tensor-parallel workloads whose KV cache per GPU does not shrink with TP (an MLA latent or KV "
        "heads replicated on every rank)",
        "  1 KV203 tensor-parallel workloads whose KV cache per chip does not shrink with TP (an MLA latent or KV "
        "heads replicated on every rank)",
    ]


def test_an_option_kvlint_leaves_out_is_not_said_where_no_plan_is_made():
    env = {"VLLM_ALL2ALL_BACKEND": "pplx"}
    planned = lint(gpu_pod("vllm/vllm-openai:v0.10.1", LLAMA_8B, env), show_infos=True).findings
    assert [f for f in planned if f.rule == "KV004" and "VLLM_ALL2ALL_BACKEND" in f.message]
    args = ["--model=example-org/not-a-known-model", "--max-model-len=8192"]
    unplanned = lint(gpu_pod("vllm/vllm-openai:v0.10.1", args, env), show_infos=True).findings
    assert [f.rule for f in unplanned if f.rule in ("KV003", "KV004")] == ["KV003"]


def test_tpu_v4_is_a_kv004_that_says_why_it_is_not_planned():
    r = lint(tpu_pod("vllm/vllm-tpu:latest", LLAMA_8B, "tpu-v4-podslice", "2x2x1", 4), show_infos=True)
    (f,) = [f for f in r.findings if f.rule == "KV004"]
    assert "Google TPU v4" in f.message and "lists v4 as experimental" in f.message
    assert "no public log shows the bytes_limit" in f.message
    assert not [f for f in r.findings if f.rule.startswith("KV1")]


def test_the_planner_says_per_chip_on_a_tpu():
    from click.testing import CliRunner

    from kvlint.cli import main

    args = [
        "plan",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--gpu",
        "tpu-v6e",
        "--gpus",
        "4",
        "--context",
        "8192",
    ]
    out = CliRunner().invoke(main, args).output
    assert "weights        3.77 GiB per chip" in out and "2 KV heads/chip x head_dim 128" in out
    assert "KV pool        24.98 GiB per chip" in out and "per GPU" not in out
