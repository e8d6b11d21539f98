"""vLLM V0's long-context default (0.5.3 on: chunked prefill for max_model_len > 32,768) is not taken with
speculative decoding: `use_spec_decode = self.speculative_model is not None` (vllm==0.5.3 and 0.6.3
engine/arg_utils.py, 0.8.0 :1623; `self.speculative_config is not None` in 0.9.0 / 0.10.0), a bar the
v0_long_context_chunk row names and the code left out: the profile run then takes the whole context."""

from __future__ import annotations

from conftest import lint

POD = """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.5
    args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, "131072"%s]
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def _batched(extra: str) -> int:
    (r,) = lint(POD % extra).deployments
    assert r.settings is not None
    return r.settings.max_batched_tokens


def test_speculative_decoding_keeps_v0_from_chunking_a_long_context():
    assert _batched("") == 2048  # the long-context default chunk (0.6.5)
    assert (
        _batched(", --speculative-model, meta-llama/Llama-3.2-1B-Instruct, --num-speculative-tokens, '5'")
        == 131072
    )
