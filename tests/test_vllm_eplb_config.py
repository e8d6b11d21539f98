"""vLLM --eplb-config: json.loads into EPLBConfig (vllm==0.22.0:vllm/engine/arg_utils.py:375, 730), whose
num_redundant_experts is Field(default=0, ge=0) (config/parallel.py:68). A value vLLM refuses is a located
KV005 and no plan, not a plan with no redundant experts; a whole number (or pydantic's lax "4") is read."""

from __future__ import annotations

import pytest
from conftest import lint

POD = """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.20.0
    args: [--model, Qwen/Qwen3-30B-A3B, --max-model-len, "8192", --enable-expert-parallel, --eplb-config, '%s']
    resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize("value", ['"x"', "-2", "2.5", "[4]"])
def test_a_num_redundant_experts_vllm_refuses_is_kv005_and_no_plan(value):
    result = lint(POD % f'{{"num_redundant_experts": {value}}}')
    (kv005,) = [f for f in result.findings if f.rule == "KV005"]
    assert "EPLBConfig" in kv005.message and kv005.where.line == 9
    assert result.deployments[0].plan is None


def test_a_readable_num_redundant_experts_is_read():
    for value in ("4", '"4"'):
        result = lint(POD % f'{{"num_redundant_experts": {value}}}')
        assert not [f for f in result.findings if f.rule == "KV005"]
        assert result.deployments[0].deployment.extra["num_redundant_experts"].value == 4
