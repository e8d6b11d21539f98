"""KV207 shm-too-small: a multi-GPU pod without a memory-backed /dev/shm, or shm above the memory limit."""

from __future__ import annotations

import pytest
from conftest import lint
from rulecase import findings


def _pod(gpus: int, tp: int, shm: str | None, memory: str = "64Gi") -> str:
    volume = (
        ""
        if shm is None
        else f"""          volumeMounts: [{{name: dshm, mountPath: /dev/shm}}]
      volumes:
        - name: dshm
          emptyDir: {{medium: Memory{", sizeLimit: " + shm if shm else ""}}}
"""
    )
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model=Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size={tp}", "--max-model-len=4096"]
          resources: {{limits: {{nvidia.com/gpu: "{gpus}", memory: {memory}}}}}
{volume}"""


@pytest.mark.parametrize(("gpus", "tp", "flagged"), [(1, 1, False), (2, 2, True), (2, 1, True)])
def test_without_shm_only_multi_gpu_pods_are_flagged(gpus, tp, flagged):
    assert bool(findings(lint(_pod(gpus, tp, None)), "KV207")) is flagged


def test_memory_backed_shm_is_enough():
    assert not findings(lint(_pod(2, 2, "")), "KV207")


@pytest.mark.parametrize(("shm", "flagged"), [("64Gi", False), ("65Gi", True)])
def test_boundary_pair_shm_against_the_memory_limit(shm, flagged):
    got = findings(lint(_pod(2, 2, shm)), "KV207")
    assert bool(got) is flagged
    if flagged:
        assert "exceeds the container's memory limit 64Gi" in got[0].message
