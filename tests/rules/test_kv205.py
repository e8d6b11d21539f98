"""KV205 batch-limits-inconsistent: vLLM's batched-token budget against its sequence and length limits."""

from __future__ import annotations

import pytest
from conftest import lint
from rulecase import findings, run


def _vllm(*args: str) -> str:
    listed = "\n".join(f"            - {a}" for a in args)
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-h100-80gb}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
          args:
{listed}
          resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


@pytest.mark.parametrize(("batched", "bad"), [(64, False), (63, True), (65, False)])
def test_boundary_pair_batched_tokens_against_sequences(batched, bad):
    r = lint(_vllm("--max-model-len=4096", "--max-num-seqs=64", f"--max-num-batched-tokens={batched}"))
    assert bool(findings(r, "KV205")) is bad


@pytest.mark.parametrize(("batched", "bad"), [(4096, False), (4095, True)])
def test_boundary_pair_with_chunked_prefill_off(batched, bad):
    r = lint(
        _vllm(
            "--max-model-len=4096",
            "--max-num-seqs=8",
            f"--max-num-batched-tokens={batched}",
            "--no-enable-chunked-prefill",
        )
    )
    got = findings(r, "KV205")
    assert bool(got) is bad
    if bad:
        assert "with chunked prefill off" in got[0].message


def test_chunked_prefill_on_allows_a_small_budget():
    assert not findings(
        lint(_vllm("--max-model-len=4096", "--max-num-seqs=8", "--max-num-batched-tokens=512")), "KV205"
    )


def test_defaults_are_not_judged():
    assert not findings(lint(_vllm("--max-model-len=4096")), "KV205")


@pytest.mark.parametrize(
    ("version", "total", "refused"),
    [
        ("2.2.0", 2048, True),
        ("2.2.0", 4096, False),
        ("1.4.5", 1024, True),
        ("1.4.5", 1025, False),
        ("3.3.7", 2048, False),
    ],
)
def test_tgi_launcher_default_input_against_a_stated_total(version, total, refused):
    """Before v3 the launcher fills an unset max_input_tokens itself (v1: 1024; v2: the model's
    max_position_embeddings capped at 4096, minus 1) and then checks it is below max_total_tokens;
    v3 derives it from max_total_tokens."""
    r = run(
        engine="tgi",
        engine_version=version,
        model="meta-llama/Llama-3.1-8B-Instruct",
        gpu="A100-80GB",
        max_context=total,
    )
    got = findings(r, "KV205")
    assert bool(got) is refused
    if refused:
        assert "default max_input_tokens" in got[0].message
