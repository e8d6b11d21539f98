"""Small Kubernetes inputs shared by the issue-rule test modules."""

from __future__ import annotations


def vllm_pod(
    args: str,
    limits: str = 'nvidia.com/gpu: "1"',
    selector: str = "cloud.google.com/gke-accelerator: nvidia-l4",
) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{{selector}}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: {args}
          resources: {{limits: {{{limits}}}}}
"""
