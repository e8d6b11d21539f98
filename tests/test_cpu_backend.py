"""A CPU build of an engine with no GPU request is no GPU workload: KV004 says so, and no GPU is planned
for it (it was "fits on a NVIDIA L4 or larger")."""

from __future__ import annotations

from conftest import carried, gpu_pod, lint

from kvlint.findings import Severity

RH_CPU = "rh-aiservices-bu__llm-on-openshift__llm-servers__vllm__cpu__gitops__deployment.yaml"


def test_the_published_cpu_vllm_deployment_is_not_checkable_not_a_gpu_plan():
    """rh-aiservices-bu/llm-on-openshift llm-servers/vllm/cpu: quay.io/rh-aiservices-bu/vllm-cpu-openai-ubi9,
    cpu and memory requests only."""
    path = carried(RH_CPU)
    result = lint(path.read_text(encoding="utf-8"), str(path))
    assert [(f.rule, f.severity) for f in result.findings] == [("KV004", Severity.INFO)]
    assert "CPU" in result.findings[0].message
    assert all(r.plan is None for r in result.deployments)


def test_the_same_image_with_a_gpu_request_is_still_planned():
    """The word in the image name only decides where the pod requests no GPU."""
    text = gpu_pod("quay.io/rh-aiservices-bu/vllm-cpu-openai-ubi9:0.3", ["--model", "Qwen/Qwen3-8B"])
    assert "KV004" not in {f.rule for f in lint(text).findings}


def test_device_cpu_with_no_gpu_request_is_a_cpu_backend():
    """vLLM 0.6-0.9 `--device cpu` (vllm==0.9.2:vllm/engine/arg_utils.py:818) on the vLLM image, no GPU."""
    text = gpu_pod("vllm/vllm-openai:v0.9.2", ["--model", "Qwen/Qwen3-8B", "--device", "cpu"], gpus=0)
    text = text.replace("resources: {limits: {nvidia.com/gpu: 0}}", "resources: {limits: {cpu: 8}}")
    found = [f for f in lint(text).findings if f.rule == "KV004"]
    assert found and "CPU" in found[0].message


def test_a_gpu_image_with_no_gpu_request_is_not_called_a_cpu_build():
    text = gpu_pod("vllm/vllm-openai:v0.10.1", ["--model", "Qwen/Qwen3-8B"]).replace(
        "resources: {limits: {nvidia.com/gpu: 1}}", "resources: {limits: {cpu: 8}}"
    )
    assert not [f for f in lint(text).findings if f.rule == "KV004" and "CPU" in f.message]
