"""The extended resource a pod requests its GPUs as is a field of the deployment record, set at extract
(`Deployment.gpu_resource`); the GPU count's note stays prose and no reader parses it."""

from __future__ import annotations

import pytest
from conftest import lint

from kvlint.findings import Severity

POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
      - name: server
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
        resources: {{limits: {{{resource}: {count}}}}}
"""


@pytest.mark.parametrize(
    "resource",
    ["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-3g.40gb", "nvidia.com/gpu.shared"],
)
def test_the_resource_the_pod_requests_is_read_as_written(resource):
    (r,) = lint(POD.format(replicas=1, resource=resource, count=1)).deployments
    d = r.deployment
    assert d.gpu_resource == resource and d.gpus_per_pod is not None and d.gpus_per_pod.value == 1


def test_a_mig_slice_and_a_shared_gpu_are_read_from_the_field():
    """extract/pod/gpu_sharing.py asks the field: a MIG resource names its slice, .shared marks sharing."""
    (mig,) = lint(POD.format(replicas=1, resource="nvidia.com/mig-3g.40gb", count=1)).deployments
    assert mig.deployment.extra["mig_profile"].value == "3g.40gb"
    (shared,) = lint(POD.format(replicas=1, resource="nvidia.com/gpu.shared", count=1)).deployments
    assert shared.deployment.gpu_shared is not None and shared.deployment.gpu_shared.value is True


def test_an_amd_request_is_fitted_on_amd_cards():
    """run/fleet.py: with no GPU type stated, an amd.com/gpu pod is placed among AMD's usual cards."""
    result = lint(POD.format(replicas=1, resource="amd.com/gpu", count=1))
    (f,) = [f for f in result.findings if f.rule == "KV002"]
    assert f.severity is Severity.INFO and "AMD" in f.message
    nvidia = lint(POD.format(replicas=1, resource="nvidia.com/gpu", count=1))
    (g,) = [f for f in nvidia.findings if f.rule == "KV002"]
    assert "AMD" not in g.message
