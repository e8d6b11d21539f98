"""vLLM on Google TPUs: the chip from GKE's labels, tpu-inference's page layout and pool, and the workloads
that stay not checked (another engine on TPU, a chip whose HBM is not known)."""

from conftest import gpu_pod, lint, vllm_settings

from kvlint.catalog import tpus
from kvlint.catalog.gpus import lookup
from kvlint.catalog.models import resolve
from kvlint.engines.vllm import tpu

GIB = 1 << 30


def tpu_pod(image: str, args: list[str], accelerator: str, topology: str, chips: int) -> str:
    import json

    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        f"      nodeSelector: {{cloud.google.com/gke-tpu-accelerator: {accelerator}, "
        f"cloud.google.com/gke-tpu-topology: {topology}}}\n      containers:\n"
        f"      - name: server\n        image: {image}\n        args: {json.dumps(args)}\n"
        f"        resources: {{limits: {{google.com/tpu: {chips}}}}}\n"
    )


def test_v6e_bytes_limit_is_the_31_25_gib_tpu_inference_logs():
    # vllm-project/tpu-inference PR #145: "Init model | hbm=[(3.74, 31.25), ...]Gb" on a TPU v6e
    assert round(lookup("tpu-v6e").engine_bytes / GIB, 2) == 31.25


def test_page_layout_matches_the_logged_kv_cache_shape():
    # PR #145, Llama-3.1-8B at TP 4 on v6e: "Init kv-cache | shape=32 * (3168, 256, 16, 128)": 32 layers of
    # 256-token pages, K and V heads combined (2 x 8 = 16) by head_dim 128 in bf16, sharded over 4 chips
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    page, _how = tpu.page_bytes(a, 4, 2, 256)
    assert page * 4 == 256 * 16 * 128 * 2
    # 3168 blocks of that page over 32 layers are 24.75 GiB per chip: the log's 3.74 -> 28.49 GiB in use
    assert round(3168 * page * 32 / GIB, 2) == round(28.49 - 3.74, 2)


def test_kv_heads_are_padded_to_tp_and_fp8_to_its_packing():
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch  # 8 KV heads, head_dim 128
    bf16_tp16, how = tpu.page_bytes(a, 16, 2, 16)
    assert bf16_tp16 == 16 * 2 * 128 * 2  # one (padded) head per chip, K and V
    assert "padded to TP 16" in how
    fp8_tp8, _ = tpu.page_bytes(a, 8, 1, 16)
    assert fp8_tp8 == 16 * 4 * 128 * 1  # 2 rows rounded up to fp8's packing of 4


def test_default_block_size_follows_max_model_len():
    assert tpu.default_block_size(4096, 128) == 256
    assert tpu.default_block_size(2048, 128) == 128
    assert tpu.default_block_size(16_384, 32) == 16  # above 8,192 tokens: 16
    assert tpu.default_block_size(32_768, 256) == 64  # raised: 512 pages per request at most
    assert tpu.default_block_size(131_072, 256) == 256  # raised to the smallest page the SMEM holds


def test_pool_is_bytes_limit_times_utilization_less_the_weights():
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    chip = lookup("tpu-v6e")
    p = tpu.plan(a, chip, vllm_settings(tp=4, max_model_len=4096, block_size=256, utilization=0.9))
    assert [t.label for t in p.terms] == ["weights"]  # no activation, non-torch or CUDA-graph term
    assert p.kv_pool == int(chip.engine_bytes * 0.9) - p.weights_per_gpu
    assert p.num_blocks == p.kv_pool // (p.page_bytes * 32)


def test_gke_tpu_labels_plan_vllm_on_the_chip():
    r = lint(
        tpu_pod(
            "vllm/vllm-tpu:latest",
            ["--model=meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size=4", "--max-model-len=4096"],
            "tpu-v6e-slice",
            "2x2",
            4,
        )
    )
    (dep,) = r.deployments
    assert not [f for f in r.findings if f.rule == "KV004"]
    assert dep.gpu.id == "tpu-v6e"
    assert dep.plan.block_size == 256


def test_jetstream_on_a_tpu_stays_not_checked():
    r = lint(
        tpu_pod(
            "us-docker.pkg.dev/cloud-tpu-images/inference/maxengine-server:v0.2.2",
            [],
            "tpu-v5-lite-podslice",
            "2x4",
            8,
        )
    )
    assert [f.rule for f in r.findings if f.rule == "KV004"]


def test_a_chip_without_a_known_bytes_limit_is_a_kv004_naming_it():
    assert lookup(tpus.chip_of_label("tpu-v4-podslice")).engine_bytes is None
    r = lint(
        tpu_pod(
            "vllm/vllm-tpu:latest",
            ["--model=meta-llama/Llama-3.1-8B-Instruct"],
            "tpu-v4-podslice",
            "2x2x1",
            4,
        )
    )
    (f,) = [f for f in r.findings if f.rule == "KV004"]
    assert "TPU v4" in f.message and "bytes_limit" in f.message


def test_topology_counts_chips():
    assert tpus.topology_chips("4x4") == 16
    assert tpus.topology_chips("2x2x2") == 8
    assert tpus.topology_chips("bogus") is None


def test_kubeai_tpu_profile_names_the_chip_and_the_torch_xla_release():
    model = (
        "apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: m}\nspec:\n"
        "  url: hf://meta-llama/Meta-Llama-3.1-8B-Instruct\n  engine: VLLM\n"
        "  args: [--tensor-parallel-size=4]\n  resourceProfile: google-tpu-v5e-2x2:4\n"
    )
    r = lint(model)
    (f,) = [f for f in r.findings if f.rule == "KV004"]
    assert "TPU v5e" in f.message and "0.6.4" in f.message
    assert f.where.line == 8  # at the resourceProfile


def test_block_override_applies_and_kv_cache_memory_bytes_does_not():
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    chip = lookup("tpu-v6e")
    base = vllm_settings(tp=4, max_model_len=4096, block_size=256)
    p = tpu.plan(a, chip, vllm_settings(tp=4, max_model_len=4096, block_size=256, kv_cache_memory_bytes=GIB))
    assert p.kv_pool == tpu.plan(a, chip, base).kv_pool
    assert any("--kv-cache-memory-bytes is not read on TPU" in n for n in p.notes)
    q = tpu.plan(
        a,
        chip,
        vllm_settings(tp=4, max_model_len=4096, block_size=256, extra={"num_gpu_blocks_override": 100}),
    )
    assert q.num_blocks == 100


def test_a_dra_tpu_claim_without_a_chip_is_a_kv004_saying_so():
    text = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: tpus}\nspec:\n  spec:\n"
        "    devices:\n      requests:\n      - name: tpus\n        exactly: {deviceClassName: tpu.google.com}\n"
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        "      resourceClaims: [{name: tpus, resourceClaimTemplateName: tpus}]\n      containers:\n"
        "      - name: server\n        image: vllm/vllm-tpu:latest\n"
        '        args: ["--model=meta-llama/Llama-3.1-8B-Instruct"]\n        resources: {claims: [{name: tpus}]}\n'
    )
    (f,) = [f for f in lint(text).findings if f.rule == "KV004"]
    assert "generation the file does not state" in f.message


def test_lws_over_four_v5e_hosts_plans_tp_16_per_chip():
    # kubernetes-sigs/lws docs/examples/vllm/TPU: a 4x4 v5e slice is four hosts of 4 chips; TP 16 spans them
    pod = (
        "        nodeSelector: {{cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice, "
        "cloud.google.com/gke-tpu-topology: 4x4}}\n        containers:\n        - name: vllm\n"
        "          image: vllm/vllm-tpu:latest\n{cmd}          resources: {{limits: {{google.com/tpu: '4'}}}}\n"
    )
    script = "bash /workspace/vllm/examples/online_serving/multi-node-serving.sh"
    leader = (
        f'          command: ["sh", "-c", "{script} leader --ray_cluster_size=4; python3 -m '
        "vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.3-70B-Instruct "
        '--tensor-parallel-size=16 --max-model-len=8192"]\n'
    )
    worker = f'          command: ["sh", "-c", "{script} worker --ray_address=$(LWS_LEADER_ADDRESS)"]\n'
    text = (
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: vllm}\nspec:\n"
        "  leaderWorkerTemplate:\n    size: 4\n    leaderTemplate:\n      spec:\n"
        + pod.format(cmd=leader)
        + "    workerTemplate:\n      spec:\n"
        + pod.format(cmd=worker)
    )
    (dep,) = lint(text).deployments
    assert dep.deployment.gpus.value == 16
    p = dep.plan
    assert p.gpu_total == lookup("tpu-v5e").engine_bytes
    assert p.weights_per_gpu * 16 >= p.weights_total  # the weights are sharded over the 16 chips


def test_kv208_above_095_names_the_tpu_workers_sizing_not_a_cuda_start_up_check():
    # vLLM's TPU worker gives the cache HBM limit x u less what is in use (tpu-inference tpu_worker.py:511-520);
    # the GPU worker's "Free memory on device ... less than desired" check has no TPU counterpart
    args = [
        "--model=meta-llama/Llama-3.2-3B-Instruct",
        "--max-model-len=8192",
        "--gpu-memory-utilization=0.97",
    ]
    tpu_file = lint(tpu_pod("vllm/vllm-tpu:latest", args, "tpu-v6e-slice", "1x1", 1))
    on_tpu = [f for f in tpu_file.findings if f.rule == "KV208"]
    assert len(on_tpu) == 1 and "HBM" in on_tpu[0].message and "CUDA" not in on_tpu[0].message
    on_gpu = [f for f in lint(gpu_pod("vllm/vllm-openai:v0.9.1", args)).findings if f.rule == "KV208"]
    assert len(on_gpu) == 1 and "start-up fails" in on_gpu[0].message and "HBM" not in on_gpu[0].message
