"""A share of one GPU asked for by annotation (KAI Scheduler `gpu-fraction` / `gpu-memory`,
NVIDIA/KAI-Scheduler docs/gpu-sharing/README.md): the pod runs on one shared GPU, not on none, and the
engine's memory fraction is checked against the share where the annotation states it."""

from __future__ import annotations

from conftest import lint

from kvlint.findings import Severity

POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    metadata:
      annotations: {{{annotation}}}
    spec:
      schedulerName: kai-scheduler
      {selector}
      containers:
      - name: server
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"{extra}]
        resources: {{limits: {{cpu: 4}}}}
"""
L4 = "nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}"


def _lint(annotation: str, extra: str = "", selector: str = ""):
    return lint(POD.format(annotation=annotation, extra=extra, selector=selector))


def test_a_gpu_fraction_pod_runs_on_one_shared_gpu():
    (r,) = _lint('gpu-fraction: "0.5"', ', "--gpu-memory-utilization", "0.45"').deployments
    d = r.deployment
    assert d.gpus_per_pod is not None and d.gpus_per_pod.value == 1 and d.gpu_shared is not None
    assert d.gpu_share is not None and d.gpu_share.value == 0.5


def test_an_engine_fraction_within_the_share_is_not_flagged():
    result = _lint('gpu-fraction: "0.5"', ', "--gpu-memory-utilization", "0.45"')
    assert not [f for f in result.findings if f.rule == "KV208"]


def test_the_engine_default_beyond_the_share_is_a_warning():
    """vLLM's default fraction (0.9 of the card) on a half-GPU share takes the other pods' memory."""
    result = _lint('gpu-fraction: "0.5"')
    (f,) = [f for f in result.findings if f.rule == "KV208"]
    assert f.severity is Severity.WARNING and "share of it (0.5" in f.message and "default" in f.message
    assert "0.5 or lower" in (f.fix or "")


def test_a_gpu_memory_share_is_a_fraction_of_the_named_card():
    """gpu-memory is MiB: on an L4 (22.5 GiB for the engine) 8,000 MiB is about a third of the card."""
    result = _lint('gpu-memory: "8000"', ', "--gpu-memory-utilization", "0.6"', L4)
    (f,) = [f for f in result.findings if f.rule == "KV208"]
    assert f.severity is Severity.WARNING and "share of it (0.3" in f.message


def test_a_gpu_memory_share_on_an_unknown_card_is_named_unchecked():
    result = _lint('gpu-memory: "8000"')
    (f,) = [f for f in result.findings if f.rule == "KV208"]
    assert f.severity is Severity.INFO and "not checked" in f.message


def test_an_unreadable_share_is_located():
    result = _lint('gpu-fraction: "half"')
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert "gpu-fraction" in f.message and f.where.line == 7


def test_a_fractional_device_count_says_kubernetes_refuses_it_not_no_gpu():
    """nvidia.com/gpu: "0.5" fails the API server's integer check for extended resources; beside node
    pools without a GPU it was told "no GPU to run on", a reason it never reaches."""
    from conftest import FIXTURES

    from kvlint.run.lint import read_and_lint
    from kvlint.run.settings import Settings

    path = FIXTURES / "pools" / "nogpu" / "fractional.yaml"
    result = read_and_lint(str(path), Settings(), "fractional.yaml")
    assert not isinstance(result, str), result
    (kv005,) = [f for f in result.findings if f.rule == "KV005"]
    assert "must be an integer" in kv005.message and "gpu-fraction" in kv005.message
    assert not [f for f in result.findings if "no GPU to run on" in f.message]
