"""KV206 dtype-unsupported-on-gpu: bfloat16 or fp8 on a card whose compute capability lacks it."""

from __future__ import annotations

from rulecase import findings, run

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # bfloat16 checkpoint


def test_bf16_needs_compute_capability_8():
    (f,) = findings(run(model=LLAMA, gpu="T4", max_context=4096, dtype="bfloat16"), "KV206")
    assert "compute capability of at least 8.0" in f.message
    assert not findings(run(model=LLAMA, gpu="A10G", max_context=4096, dtype="bfloat16"), "KV206")


def test_half_precision_on_a_t4_is_fine():
    assert not findings(run(model=LLAMA, gpu="T4", max_context=4096, dtype="float16"), "KV206")
