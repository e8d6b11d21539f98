"""MLX conversions (mlx-lm's `mlx_lm.convert -q`, published under mlx-community or with an MLX word in the name):
the base's architecture by the name rule, and a KV004 that says no GPU engine kvlint models loads MLX weights,
never a plan at the base's precision. mlx-lm stores each quantized weight packed with a scale and a bias per group
(ml-explore/mlx@29a620ca python/mlx/nn/layers/quantized.py); vLLM has no MLX quantization method
(vllm-project/vllm@0034007d vllm/model_executor/layers/quantization/__init__.py), and SGLang runs MLX models only
on its opt-in Apple-silicon backend (sgl-project/sglang@3e95f8d7 python/sglang/srt/hardware_backend/mlx/runtime.py).
"""

from __future__ import annotations

import pytest
from conftest import gpu_pod, lint

from kvlint.catalog import models
from kvlint.catalog.name_rules import split_mlx
from kvlint.findings import Severity


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("mlx-community/Qwen3-30B-A3B-4bit", "Qwen/Qwen3-30B-A3B"),  # issue 24's example
        ("Qwen/Qwen3-4B-MLX-4bit", "Qwen/Qwen3-4B"),  # Qwen's own MLX release (find_string file 52463939709)
        ("mlx-community/MiniMax-M2.1-6bit", "MiniMaxAI/MiniMax-M2.1"),  # its config: quantization bits 6
    ],
)
def test_an_mlx_conversion_keeps_the_base_architecture_and_prices_no_weights(name, base):
    got, want = models.resolve(name), models.resolve(base).arch
    assert got.arch is not None and got.arch.layers == want.layers and got.arch.kv_heads == want.kv_heads
    assert got.arch.quant is None and "MLX" in got.unpriced and "not priced" in got.unpriced
    assert "MLX conversion name" in got.derived  # the rule KV007 and KV004 name, not a quantization suffix


@pytest.mark.parametrize(
    "name",
    [
        "Duxiaoman-DI/XuanYuan-70B-Chat-8bit",  # -8bit outside MLX: LLaMA-Factory's table (not_derived_ids.txt)
        "lmstudio-community/Qwen3-30B-A3B-Instruct-2507-MLX-4bit",  # a dated release (find_string file 23853477192)
    ],
)
def test_a_bit_width_name_that_is_no_mlx_copy_of_a_catalogued_base_stays_unknown(name):
    assert models.resolve(name).arch is None


def test_only_the_mlx_organisation_or_word_makes_a_bit_width_an_mlx_format():
    assert split_mlx("Llama-3.2-3B-Instruct-4bit", "mlx-community") is not None
    assert split_mlx("Llama-3.2-3B-Instruct-4bit", "someone") is None
    assert split_mlx("Qwen3-4B-MLX-4bit", "qwen") is not None
    assert split_mlx("Llama-3.2-3B-bf16", "mlx-community") is None  # bf16: the BF16 rule, plain weights


def test_a_vllm_deployment_of_an_mlx_copy_is_not_checkable_rather_than_planned():
    text = gpu_pod("vllm/vllm-openai:v0.10.1", ["--model", "mlx-community/Qwen3-30B-A3B-4bit"])
    result = lint(text)
    found = [f for f in result.findings if f.rule == "KV004"]
    assert found and found[0].severity == Severity.INFO and "MLX" in found[0].message
    assert "GGUF file naming" not in (found[0].fix or "") and "base checkpoint" in (found[0].fix or "")
    assert all(r.plan is None for r in result.deployments)
