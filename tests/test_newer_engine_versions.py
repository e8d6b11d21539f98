"""A release newer than the newest one kvlint read gets that release's behaviour, and the plan says so (as
vLLM's does: 'v0.40.0 is newer than kvlint's table'), for SGLang (rows read to v0.5.23) and TGI (v3.3.x)."""

from __future__ import annotations

import pytest
from conftest import lint

SGLANG = """apiVersion: v1
kind: Pod
metadata: {{name: sg}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-h100-80gb}}
  containers:
  - name: sglang
    image: lmsysorg/sglang:{tag}
    command: [python3, -m, sglang.launch_server]
    args: [--model-path, meta-llama/Llama-3.1-8B-Instruct, --context-length, "8192"]
    resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""
TGI = """apiVersion: v1
kind: Pod
metadata: {{name: tgi}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-h100-80gb}}
  containers:
  - name: tgi
    image: ghcr.io/huggingface/text-generation-inference:{tag}
    args: [--model-id, meta-llama/Llama-3.1-8B-Instruct, --max-total-tokens, "8192"]
    resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def _notes(text: str) -> list[str]:
    (r,) = lint(text).deployments
    assert r.plan is not None
    return r.plan.notes


@pytest.mark.parametrize(
    ("template", "tag"), [(SGLANG, "v0.6.0"), (SGLANG, "latest"), (TGI, "4.0.0"), (TGI, "latest")]
)
def test_a_newer_or_unknown_release_is_said(template, tag):
    assert any("newer than the newest" in n for n in _notes(template.format(tag=tag)))


@pytest.mark.parametrize(
    ("template", "tag"), [(SGLANG, "v0.5.23"), (SGLANG, "v0.5.9"), (TGI, "3.3.7"), (TGI, "3.3")]
)
def test_a_release_kvlint_read_is_not_flagged(template, tag):
    assert not any("newer than the newest" in n for n in _notes(template.format(tag=tag)))
