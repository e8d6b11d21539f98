"""A cap on each GPU's memory that a GPU-sharing device plugin enforces (HAMi `nvidia.com/gpumem` /
`nvidia.com/gpumem-percentage`, Volcano vGPU `volcano.sh/vgpu-memory`; extract/pod/vgpu.py): HAMi-core
reports the cap as the device's total, so each engine's memory fraction applies to the cap, and the
plan is made on it; a cap kvlint cannot read, or larger than the card, is said where it is written."""

from __future__ import annotations

import pytest
from conftest import carried, lint

from kvlint.catalog import gpus as catalog
from kvlint.findings import Severity
from kvlint.resolve import Defaults

MIB = 2**20
A100 = "NVIDIA-A100-SXM4-80GB"
POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    metadata:
      annotations: {{{annotations}}}
    spec:
      schedulerName: hami-scheduler
      nodeSelector: {{nvidia.com/gpu.product: {product}}}
      containers:
      - name: server
        image: {image}
        args: {args}
        resources:
          limits: {{{limits}}}
"""
VLLM = (
    "vllm/vllm-openai:v0.10.1",
    '["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]',
)
ENGINES = {
    "vllm": VLLM,
    "sglang": (
        "lmsysorg/sglang:v0.4.6",
        '["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct", '
        '"--context-length", "8192"]',
    ),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:3.0.1",
        '["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--max-total-tokens", "8192", "--max-input-tokens", "4096"]',
    ),
}


def _lint(limits: str, engine: str = "vllm", product: str = A100, annotations: str = "", args: str = ""):
    image, engine_args = ENGINES[engine]
    text = POD.format(
        annotations=annotations, product=product, image=image, args=args or engine_args, limits=limits
    )
    return lint(text)


def _card(product: str = A100):
    spec = catalog.lookup(product)
    assert spec is not None and spec.engine_bytes and spec.smi_total_mib
    return spec


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_each_engine_plans_on_the_cap_not_the_card(engine):
    """vLLM, SGLang and TGI size their pool from the total the driver reports: under HAMi the cap."""
    result = _lint('nvidia.com/gpu: 1, nvidia.com/gpumem: "12000"', engine)
    (r,) = result.deployments
    assert r.plan is not None and r.plan.gpu_total == 12000 * MIB < _card().engine_bytes
    (f,) = [f for f in result.findings if f.rule == "KV101"]  # 8B bf16 weights (15 GiB) exceed 12,000 MiB
    assert "HAMi limits each GPU to 12,000 MiB (nvidia.com/gpumem)" in f.message


def test_the_same_pod_without_the_cap_is_planned_on_the_whole_card():
    (r,) = _lint("nvidia.com/gpu: 1").deployments
    assert r.plan is not None and r.plan.gpu_total == _card().engine_bytes


def test_gpucores_is_compute_only():
    (r,) = _lint('nvidia.com/gpu: 1, nvidia.com/gpucores: "50"').deployments
    assert r.plan is not None and r.plan.gpu_total == _card().engine_bytes


def test_a_fitting_cap_leaves_the_fits_to_the_kv_rules():
    result = _lint('nvidia.com/gpu: 1, nvidia.com/gpumem: "24000"')
    (r,) = result.deployments
    assert r.plan is not None and r.plan.gpu_total == 24000 * MIB
    assert not [f for f in result.findings if f.rule == "KV101"]
    (f,) = [
        f for f in result.findings if f.rule == "KV103"
    ]  # 256 sequences of 8,192 tokens: not in 24,000 MiB
    assert f.severity is Severity.WARNING


def test_a_percentage_is_of_the_cards_nvml_total_in_whole_mib():
    card = _card()
    (r,) = _lint('nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: "25"').deployments
    assert r.plan is not None and r.plan.gpu_total == card.smi_total_mib * 25 // 100 * MIB
    assert r.deployment.gpu_limit_share is not None and r.deployment.gpu_limit_bytes is None


def test_gpumem_wins_over_a_percentage():
    (r,) = _lint(
        'nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: "50", nvidia.com/gpumem: "12000"'
    ).deployments
    assert r.plan is not None and r.plan.gpu_total == 12000 * MIB


def test_every_gpu_of_the_pod_is_capped():
    args = '["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", "--tensor-parallel-size", "2"]'
    result = _lint('nvidia.com/gpu: 2, nvidia.com/gpumem: "12000"', args=args)
    (r,) = result.deployments
    assert (
        r.plan is not None
        and r.plan.gpu_total == 12000 * MIB
        and r.settings is not None
        and r.settings.tp == 2
    )
    assert not [f for f in result.findings if f.rule in ("KV101", "KV201")]  # half the weights each


def test_a_cap_without_a_gpu_count_gets_hamis_default_one_gpu():
    (r,) = _lint('nvidia.com/gpumem: "12000"').deployments
    d = r.deployment
    assert d.gpus_per_pod is not None and d.gpus_per_pod.value == 1 and d.gpus_per_pod.origin == "inferred"
    assert d.gpu_resource == "nvidia.com/gpu" and r.plan is not None and r.plan.gpu_total == 12000 * MIB


@pytest.mark.parametrize(
    ("limits", "name"),
    [
        ('nvidia.com/gpumem: "3Gi"', "nvidia.com/gpumem"),
        ('nvidia.com/gpumem: "lots"', "nvidia.com/gpumem"),
        ('nvidia.com/gpumem: "-1"', "nvidia.com/gpumem"),
        ('nvidia.com/gpumem-percentage: "120"', "nvidia.com/gpumem-percentage"),
    ],
)
def test_an_unreadable_cap_is_located_and_not_planned(limits, name):
    result = _lint(f"nvidia.com/gpu: 1, {limits}")
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert name in f.message and f.where.line == 16
    (r,) = result.deployments
    assert r.plan is None  # the memory each GPU gives the engine is unknown: no capacity figure


def test_a_percentage_over_100_says_the_webhook_refuses_it():
    (f,) = [
        f
        for f in _lint('nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: "120"').findings
        if f.rule == "KV005"
    ]
    assert "refuses the pod" in f.message


def test_a_zero_cap_is_no_cap():
    """HAMi reads 0 as unset and applies its defaultMemory (the chart's 0: the whole card)."""
    result = _lint('nvidia.com/gpu: 1, nvidia.com/gpumem: "0"')
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.severity is Severity.INFO and "sets no cap" in f.message
    (r,) = result.deployments
    assert r.plan is not None and r.plan.gpu_total == _card().engine_bytes


def test_a_cap_beyond_the_card_keeps_the_pod_pending():
    card = _card("NVIDIA-L40S")
    result = _lint(f'nvidia.com/gpu: 1, nvidia.com/gpumem: "{card.smi_total_mib + 1}"', product="NVIDIA-L40S")
    (f,) = [f for f in result.findings if f.rule == "KV002"]
    assert "Pending" in f.message and f"{card.smi_total_mib:,} MiB" in f.message and f.where.line == 16
    (r,) = result.deployments
    assert r.plan is None


def test_the_whole_card_as_a_cap_is_the_card():
    card = _card()
    (r,) = _lint(f'nvidia.com/gpu: 1, nvidia.com/gpumem: "{card.smi_total_mib}"').deployments
    assert r.plan is not None and r.plan.gpu_total == card.engine_bytes  # min(cap, what the card reports)


def test_volcano_vgpu_counts_and_caps_the_same_way():
    result = _lint('volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: "12000"')
    (r,) = result.deployments
    assert r.deployment.gpus_per_pod is not None and r.deployment.gpus_per_pod.value == 1
    assert r.plan is not None and r.plan.gpu_total == 12000 * MIB
    (f,) = [f for f in result.findings if f.rule == "KV101"]
    assert "Volcano vGPU limits each GPU to 12,000 MiB (volcano.sh/vgpu-memory)" in f.message


def test_an_enforced_cap_is_not_a_kai_share():
    """KV208's share check is for shares nothing enforces: under a cap the fraction is of the cap."""
    result = _lint('nvidia.com/gpu: 1, nvidia.com/gpumem: "24000"')
    (r,) = result.deployments
    assert r.deployment.gpu_share is None and r.deployment.gpu_share_bytes is None
    assert not [f for f in result.findings if f.rule == "KV208"]


def test_the_dynamo_hami_example_caps_each_worker_at_3000_mib():
    """ai-dynamo/dynamo examples/backends/vllm/deploy/disagg_hami.yaml: `device.resources` with
    nvidia.com/gpumem "3000" and nvidia.com/gpucores "50" under schedulerName hami-scheduler."""
    path = carried("ai-dynamo__dynamo__examples__backends__vllm__deploy__disagg_hami.yaml")
    result = lint(path.read_text(), path.name, defaults=Defaults(gpu="A100-80GB"))
    (r,) = result.deployments
    cap = r.deployment.gpu_limit_bytes
    assert cap is not None and cap.value == 3000 * MIB and cap.where is not None and cap.where.line == 19
    assert r.gpu is not None and r.gpu.engine_bytes == 3000 * MIB  # no model stated: the GPU is planned on


def _mig_example(product: str) -> str:
    """Project-HAMi/HAMi examples/nvidia/dynamic_mig_example.yaml (`nvidia.com/vgpu-mode: "mig"`,
    nvidia.com/gpu 2, nvidia.com/gpumem 8000), its container made a vLLM server on a named card here."""
    text = carried("Project-HAMi__HAMi__examples__nvidia__dynamic_mig_example.yaml").read_text()
    return (
        text.replace(
            "spec:\n  containers:",
            f"spec:\n  nodeSelector: {{nvidia.com/gpu.product: {product}}}\n  containers:",
        )
        .replace("image: ubuntu:18.04", "image: vllm/vllm-openai:v0.10.1")
        .replace(
            'command: ["bash", "-c", "sleep 86400"]',
            'args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "8192"]',
        )
    )


@pytest.mark.parametrize(
    ("product", "profile"),
    # the example's own comment: "2g.10gb * 2 for A100-40GB-PCIE device or 1g.10gb * 2 for A100-80GB"
    [("NVIDIA-A100-PCIE-40GB", "2g.10gb"), ("NVIDIA-A100-SXM4-80GB", "1g.10gb")],
)
def test_hami_dynamic_mig_gives_the_smallest_allowed_slice_holding_the_memory(product, profile):
    result = lint(_mig_example(product))
    (r,) = result.deployments
    d = r.deployment
    assert d.gpu_limit_bytes is None and d.extra["mig_profile"].value == profile
    assert r.gpu is not None and r.gpu.mig_profile == profile
    assert [f for f in result.findings if f.rule == "KV209"]  # two MIG slices for one engine


def test_hami_dynamic_mig_on_an_unstated_card_names_no_slice():
    text = _mig_example("X").replace("  nodeSelector: {nvidia.com/gpu.product: X}\n", "")
    result = lint(text, defaults=Defaults(gpu="A100-80GB"))
    (f,) = [f for f in result.findings if f.rule == "KV002"]
    assert "dynamic MIG" in f.message and f.severity is Severity.INFO
    (r,) = result.deployments
    assert r.plan is None  # not planned on the whole A100-80GB the default names


@pytest.mark.parametrize("annotations", ["", "nvidia.com/vgpu-mode: mig"])
@pytest.mark.parametrize("value", ['"abc"', '"-5"', "[8000]", "{mib: 8000}"])
def test_a_memory_request_kvlint_cannot_read_is_said_with_or_without_dynamic_mig(annotations, value):
    # a capped card and a MIG slice both hang on the amount: unread, it is a located KV005 and nothing is planned
    # on the whole card (dynamic MIG passed a bad amount over in silence before)
    result = _lint(f"nvidia.com/gpu: 1, nvidia.com/gpumem: {value}", annotations=annotations)
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert "nvidia.com/gpumem" in f.message and f.where.line == 16  # the limits line
    (r,) = result.deployments
    assert r.plan is None and not [f for f in result.findings if f.rule in ("KV101", "KV102", "KV103")]


def test_an_alibaba_gpu_mem_share_is_one_gpu_checked_like_kais():
    """aliyun.com/gpu-mem is GiB of one GPU (gpushare-device-plugin's default unit); the open-source plugin
    isolates nothing (cGPU nodes may): the card is planned whole and KV208 compares the engine's fraction."""
    result = _lint("aliyun.com/gpu-mem: 4")
    (r,) = result.deployments
    d = r.deployment
    assert d.gpus_per_pod is not None and d.gpus_per_pod.value == 1 and d.gpu_shared is not None
    assert (
        d.gpu_share_bytes is not None and d.gpu_share_bytes.value == 4 * 2**30 and d.gpu_limit_bytes is None
    )
    assert r.plan is not None and r.plan.gpu_total == _card().engine_bytes
    (f,) = [f for f in result.findings if f.rule == "KV208"]
    assert "aliyun.com/gpu-mem 4 GiB" in f.message and "cGPU" in f.message


def test_an_unreadable_alibaba_share_is_located():
    (f,) = [f for f in _lint('aliyun.com/gpu-mem: "4.5"').findings if f.rule == "KV005"]
    assert "aliyun.com/gpu-mem" in f.message and "GiB" in f.message and f.where.line == 16


def test_tencent_vcuda_below_100_cores_is_one_gpu_capped_at_256_mib_blocks():
    """tkestack/gpu-manager README: 1 tencent.com/vcuda-memory is 256 MiB; vcuda-controller reports the
    blocks as the device's total."""
    result = _lint("tencent.com/vcuda-core: 50, tencent.com/vcuda-memory: 48")
    (r,) = result.deployments
    assert r.deployment.gpus_per_pod is not None and r.deployment.gpus_per_pod.value == 1
    assert r.plan is not None and r.plan.gpu_total == 48 * 256 * MIB
    (f,) = [f for f in result.findings if f.rule == "KV101"]
    assert "Tencent vcuda limits the GPU to 12,288 MiB (tencent.com/vcuda-memory 48)" in f.message


def test_tencent_vcuda_hundreds_of_cores_are_whole_gpus():
    args = '["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", "--tensor-parallel-size", "2"]'
    result = _lint("tencent.com/vcuda-core: 200, tencent.com/vcuda-memory: 60", args=args)
    (r,) = result.deployments
    assert r.deployment.gpus_per_pod is not None and r.deployment.gpus_per_pod.value == 2
    assert r.plan is not None and r.plan.gpu_total == _card().engine_bytes
    assert not [f for f in result.findings if f.rule == "KV201"]


@pytest.mark.parametrize(
    ("limits", "line_of"),
    [
        ("tencent.com/vcuda-core: 150, tencent.com/vcuda-memory: 60", "core"),
        ("tencent.com/vcuda-core: 50", "core"),
        ('tencent.com/vcuda-core: 50, tencent.com/vcuda-memory: "lots"', "memory"),
    ],
)
def test_a_vcuda_request_gpu_manager_refuses_is_located(limits, line_of):
    result = _lint(limits)
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert "tencent.com/vcuda-core" in f.message and "refuses the pod" in f.message
    column = POD.format(annotations="", product=A100, image="i", args="a", limits=limits).splitlines()[15]
    assert f.where.line == 16 and column.index("vcuda-" + line_of) < f.where.column


def test_a_volcano_percentage_over_100_is_unreadable_without_hamis_webhook_words():
    result = _lint('volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory-percentage: "150"')
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert "volcano.sh/vgpu-memory-percentage" in f.message and "webhook" not in f.message


def test_gpumem_zero_beside_a_percentage_leaves_the_percentage():
    card = _card()
    result = _lint('nvidia.com/gpu: 1, nvidia.com/gpumem: "0", nvidia.com/gpumem-percentage: "50"')
    (r,) = result.deployments
    assert r.plan is not None and r.plan.gpu_total == card.smi_total_mib * 50 // 100 * MIB
    assert not [f for f in result.findings if f.rule == "KV005"]
