"""KV101 weights-exceed-memory: the weights of one GPU's share exceed what the engine may use."""

from __future__ import annotations

import pytest
from rulecase import findings, plan, run

LLAMA70 = "meta-llama/Llama-3.1-70B-Instruct"


@pytest.mark.parametrize(
    ("engine", "version"), [("vllm", "0.10.1"), ("sglang", "0.4.6.post1"), ("tgi", "3.0.0")]
)
def test_boundary_pair_in_tensor_parallel_size(engine, version):
    """The smallest TP whose weights fit passes; half of it fails and names that TP as the fix."""
    tp = 1
    while True:
        r = run(
            engine=engine,
            engine_version=version,
            model=LLAMA70,
            gpu="L4",
            gpus=tp,
            tensor_parallel=tp,
            max_context=2048,
        )
        p = plan(r)
        if p.weights_per_gpu <= p.weights_limit:
            break
        tp *= 2
        assert tp <= 16
    assert tp > 1 and not findings(r, "KV101")
    half = run(
        engine=engine,
        engine_version=version,
        model=LLAMA70,
        gpu="L4",
        gpus=tp // 2,
        tensor_parallel=tp // 2,
        max_context=2048,
    )
    (f,) = findings(half, "KV101")
    assert f.message.startswith("weights need ")
    assert f" {tp} ({tp} GPUs" in (f.fix or "")


def test_fp8_is_offered_for_an_unquantized_model_on_vllm():
    (f,) = findings(run(model="meta-llama/Llama-3.1-8B-Instruct", gpu="T4", max_context=2048), "KV101")
    assert "fp8" in (f.fix or "") or "tensor" in (f.fix or "")
