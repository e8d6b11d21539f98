"""vLLM on the TPU chips beyond v5e and v6e: v5p (one megacore device per chip), TPU7x (two TensorCores per
chip, each a JAX device of half the chip's HBM), the rules' wording per chip, and vLLM's batching defaults on
a TPU, which do not follow the chip's HBM as they do a GPU's."""

from pathlib import Path

from conftest import lint
from test_vllm_tpu import tpu_pod

from kvlint.catalog.gpus import lookup
from kvlint.engines.vllm.versions import default_batching

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_tpu7x_chips_are_two_devices_each_and_tp_counts_the_devices():
    # llm-d's TPU7x guides run --tensor-parallel-size=16 over a 2x2x2 slice of 8 chips (google.com/tpu: 4 on
    # each of two hosts); here one host of 4 chips runs TP 8
    args = ["--model=meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size=8", "--max-model-len=8192"]
    r = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu7x", "2x2x1", 4))
    (dep,) = r.deployments
    assert dep.deployment.gpus.value == 8
    # the count is of devices, the resource stays google.com/tpu (landing and Kueue admission match it)
    assert dep.deployment.gpus_per_pod.note == "google.com/tpu"
    assert not [f for f in r.findings if f.rule in ("KV004", "KV201")]
    assert dep.plan.gpu_total == lookup("tpu-v7x").engine_bytes
    assert any("per TensorCore" in line for line in dep.plan.lines)


def test_replicated_kv_heads_on_tpu7x_are_counted_in_tensorcores():
    # Qwen2.5-7B has 4 KV heads: TP 8 over 4 TPU7x chips puts each head on two TensorCores
    args = ["--model=Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size=8", "--max-model-len=8192"]
    r = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu7x", "2x2x1", 4), show_infos=True)
    (f,) = [f for f in r.findings if f.rule == "KV203"]
    assert "replicated on 2 TensorCores" in f.message and "GPU" not in f.message


def test_a_70b_model_loads_on_four_v5p_chips_and_not_on_four_v5e():
    args = ["--model=meta-llama/Llama-3.3-70B-Instruct", "--tensor-parallel-size=4", "--max-model-len=8192"]
    on_v5p = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu-v5p-slice", "2x2x1", 4))
    assert not [f for f in on_v5p.findings if f.rule in ("KV004", "KV101")]
    on_v5e = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu-v5-lite-podslice", "2x2", 4))
    (f,) = [f for f in on_v5e.findings if f.rule == "KV101"]
    assert "per chip" in f.message and "16 chips" in f.fix


def test_kv102_on_a_tpu_says_per_chip():
    path = FIXTURES / "KV102" / "bad-vllm-tpu-3b-v5e-128k.yaml"
    (f,) = [f for f in lint(path.read_text(), str(path)).findings if f.rule == "KV102"]
    assert "per chip" in f.message and "per GPU" not in f.message


def test_tpu_batching_defaults_do_not_follow_the_chips_hbm():
    # a TPU7x device has 94.75 GiB, an H100 79 GiB: vLLM gives the H100 its large tier, the TPU the small one
    # (get_device_total_memory raises on TPU; the per-chip TPU rows never match)
    assert default_batching(lookup("h100"), (0, 27, 0), "V1", 8192)[:2] == (1024, 8192)
    seqs, batched, note = default_batching(lookup("tpu-v7x"), (0, 27, 0), "V1", 8192)
    assert (seqs, batched) == (256, 2048)
    assert "TPU" in note


def test_a_stated_block_size_is_kept_from_0_18_and_overwritten_before():
    args = ["--model=meta-llama/Llama-3.1-8B-Instruct", "--max-model-len=4096", "--block-size=32"]
    (old,) = lint(tpu_pod("vllm/vllm-tpu:v0.12.0", args, "tpu-v6e-slice", "1x1", 1)).deployments
    (new,) = lint(tpu_pod("vllm/vllm-tpu:v0.18.0", args, "tpu-v6e-slice", "1x1", 1)).deployments
    assert new.plan.block_size == 32
    assert old.plan.block_size == 256  # the page size for 4,096 tokens, as without --block-size


def test_mla_and_hybrid_models_on_a_tpu_are_a_kv004_naming_the_layout():
    # tpu-inference keeps MLA as one padded latent per page and pads hybrid layers to attention + state pages:
    # neither is the K+V page layout kvlint plans on TPU, so neither gets a plan
    for model, says in (
        ("deepseek-ai/DeepSeek-V3", "MLA model"),
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", "hybrid model"),
    ):
        args = [f"--model={model}", "--tensor-parallel-size=8", "--max-model-len=8192"]
        r = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu7x", "2x2x1", 4))
        (dep,) = r.deployments
        assert dep.plan is None
        (f,) = [f for f in r.findings if f.rule == "KV004" and "layout" in f.message]
        assert says in f.message and "tpu-inference" in f.message


def test_tp_4_on_four_tpu7x_chips_leaves_four_tensorcores_idle():
    args = ["--model=meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size=4", "--max-model-len=8192"]
    r = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu7x", "2x2x1", 4))
    (f,) = [f for f in r.findings if f.rule == "KV201"]
    assert "4 TensorCores sit idle" in f.message
    assert "request 2 chips (4 TensorCores)" in f.fix
    fits = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu-v6e-slice", "2x2", 4))
    assert not [f for f in fits.findings if f.rule == "KV201"]  # a v6e chip is one device: TP 4 uses all 4
