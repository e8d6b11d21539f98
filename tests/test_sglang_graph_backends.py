"""SGLang's per-phase CUDA-graph backends (v0.5.14 on): argparse takes `choices=Backend.ALL` as written
(sglang 0.5.14 server_args.py:1929-1936 and model_executor/cuda_graph_config.py: full, breakable,
tc_piecewise, disabled; 0.5.22 drops tc_piecewise). Any other value stops the server: a KV005 at the value,
and it does not count as an explicit backend (which would skip the rules that turn the prefill graph off)."""

from __future__ import annotations

import json

import pytest
from conftest import lint

POD = """apiVersion: v1
kind: Pod
metadata: {{name: sglang}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-h100-80gb}}
  containers:
  - name: sglang
    image: lmsysorg/sglang:v0.5.15
    command: [python3, -m, sglang.launch_server]
    args: {args}
    resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""
MODEL = "deepseek-ai/DeepSeek-V2-Lite-Chat"  # MLA: v0.5.15's rules keep it off the prefill graph


def _lint(*flags: str):
    return lint(POD.format(args=json.dumps(["--model-path", MODEL, "--context-length", "8192", *flags])))


@pytest.mark.parametrize("value", ["bogus", "DISABLED", "Full"])
def test_a_backend_argparse_refuses_is_kv005_and_not_an_explicit_backend(value):
    result = _lint("--cuda-graph-backend-prefill", value)
    kv005 = [f for f in result.findings if f.rule == "KV005"]
    assert len(kv005) == 1 and f"'{value}'" in kv005[0].message and kv005[0].where.line == 10
    unstated = _lint().deployments[0].plan
    assert result.deployments[0].plan.utilization == unstated.utilization


def test_a_backend_as_written_is_read():
    assert not [f for f in _lint("--cuda-graph-backend-prefill", "breakable").findings if f.rule == "KV005"]
    off = _lint("--cuda-graph-backend-decode", "disabled")
    assert not [f for f in off.findings if f.rule == "KV005"]
    assert off.deployments[0].plan.utilization > _lint().deployments[0].plan.utilization  # no decode reserve
