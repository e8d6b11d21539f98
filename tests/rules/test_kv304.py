"""KV304 ambiguous-size-suffix: 32k is 32,000 tokens in vLLM; 80G is 80 x 10^9 bytes in Kubernetes."""

from __future__ import annotations

import pytest
from conftest import lint
from rulecase import findings


def _vllm(context: str, memory: str = "64Gi") -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-a100-80gb}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
          args: ["--max-model-len={context}", "--max-num-seqs=2"]
          resources: {{limits: {{nvidia.com/gpu: "1", memory: {memory}}}}}
"""


@pytest.mark.parametrize(
    ("context", "flagged"), [("32k", True), ("32K", False), ("32768", False), ("32000", False)]
)
def test_lowercase_token_suffix(context, flagged):
    got = findings(lint(_vllm(context)), "KV304")
    assert bool(got) is flagged
    if flagged:
        assert "32,000 tokens" in got[0].message and "32,768" in got[0].message


@pytest.mark.parametrize(("memory", "flagged"), [("80G", True), ("80Gi", False), ("85899345920", False)])
def test_decimal_memory_quantity(memory, flagged):
    got = findings(lint(_vllm("32768", memory)), "KV304")
    assert bool(got) is flagged
    if flagged:
        assert "not 80Gi" in got[0].message
