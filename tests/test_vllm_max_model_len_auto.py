"""vLLM --max-model-len auto / -1 by release: from v0.14.0 vLLM lowers max_model_len to the largest one
request fits (vllm==0.14.0:vllm/engine/arg_utils.py:2121 human_readable_int_or_auto); before, the option is a
whole number above 0 (vllm==0.13.0:vllm/config/model.py:167 Field(gt=0); 0.13.0's human_readable_int is
int(value) for 'auto'), so the engine does not start: a KV005 at the value, no plan on the model's length."""

from __future__ import annotations

import pytest
from conftest import lint

POD = """apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
  containers:
  - name: vllm
    image: vllm/vllm-openai:{tag}
    args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, "{value}"]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize("value", ["auto", "-1"])
def test_before_v0_14_auto_is_refused_where_it_is_written(value):
    result = lint(POD.format(tag="v0.13.0", value=value))
    (kv005,) = [f for f in result.findings if f.rule == "KV005"]
    assert "refuses --max-model-len auto" in kv005.message and kv005.where.line == 9
    assert result.deployments[0].plan is None
    assert not [f for f in result.findings if f.rule in ("KV102", "KV103")]  # no plan at 131,072 tokens


def test_from_v0_14_the_context_is_named_as_auto_fitted():
    result = lint(POD.format(tag="v0.14.0", value="auto"))
    ctx = result.deployments[0].in_force.max_context  # the context the plan settles (resolve.py)
    plan = result.deployments[0].plan
    assert plan is not None and ctx.value == plan.max_model_len < 131_072
    assert "--max-model-len auto" in ctx.note and "model config" not in ctx.note
    assert not [f for f in result.findings if f.rule == "KV005"]
