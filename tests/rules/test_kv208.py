"""KV208 utilization-out-of-range: the engine's memory share outside (0, 1], or above 0.95."""

from __future__ import annotations

import pytest
from rulecase import findings, run

from kvlint.findings import Severity

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def test_boundary_pair_at_the_095_warning():
    assert not findings(run(model=LLAMA, gpu="H100", max_context=8192, gpu_memory_utilization=0.95), "KV208")
    (f,) = findings(run(model=LLAMA, gpu="H100", max_context=8192, gpu_memory_utilization=0.96), "KV208")
    assert f.severity == Severity.WARNING


def test_one_is_allowed_but_warned():
    (f,) = findings(run(model=LLAMA, gpu="H100", max_context=8192, gpu_memory_utilization=1.0), "KV208")
    assert f.severity == Severity.WARNING


@pytest.mark.parametrize("value", [0, -0.5, 1.01, 90])
def test_outside_zero_one_is_refused_with_a_located_error(value):
    r = run(model=LLAMA, gpu="H100", max_context=8192, gpu_memory_utilization=value)
    errors = [f for f in r.findings if f.severity == Severity.ERROR]
    assert errors, [f.message for f in r.findings]
    assert all(f.where.line == 6 for f in errors)  # the utilization line of the spec
    assert not r.crashed


def test_engine_defaults_are_not_judged():
    assert not findings(run(model=LLAMA, gpu="H100", max_context=8192), "KV208")


@pytest.mark.parametrize(
    ("engine", "flag"), [("sglang", "--mem-fraction-static"), ("tgi", "CUDA_MEMORY_FRACTION")]
)
def test_sglang_and_tgi_fractions_are_checked_too(engine, flag, tmp_path):
    from conftest import lint

    args = {
        "sglang": f'["--model-path", "{LLAMA}", "--mem-fraction-static", "0.99"]',
        "tgi": f'["--model-id", "{LLAMA}"]',
    }[engine]
    image = {
        "sglang": "lmsysorg/sglang:v0.4.6.post1-cu124",
        "tgi": "ghcr.io/huggingface/text-generation-inference:3.0.0",
    }[engine]
    env = '[{name: CUDA_MEMORY_FRACTION, value: "0.99"}]' if engine == "tgi" else "[]"
    command = '["python3", "-m", "sglang.launch_server"]' if engine == "sglang" else "[]"
    text = f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-h100-80gb}}
      containers:
      - name: s
        image: {image}
        command: {command}
        args: {args}
        env: {env}
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""
    (f,) = findings(lint(text), "KV208")
    assert f.severity == Severity.WARNING and flag in f.message
