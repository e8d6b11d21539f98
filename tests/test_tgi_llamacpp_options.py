"""TGI option values that change what kvlint says. TGI's llama.cpp router options of the wrong type or range
(backends/llamacpp/src/main.rs at v3.3.7: n_gpu_layers, n_threads, n_threads_batch, max_batch_total_tokens are
usize; clap refuses -1 or 'abc'): a located KV005, and the KV004 then says the value is unknown instead of
naming the default in its place. --speculate 0 is no speculation."""

from __future__ import annotations

import pytest
from conftest import lint

POD = """apiVersion: v1
kind: Pod
metadata: {{name: tgi}}
spec:
  containers:
  - name: tgi
    image: tgi-llamacpp
    args: [{args}]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _findings(*args: str):
    text = POD.format(args=", ".join(f"'{a}'" for a in ("--model-id", "Qwen/Qwen2.5-3B-Instruct", *args)))
    result = lint(text)
    return [f for f in result.findings if f.rule == "KV005"], [
        f for f in result.findings if f.rule == "KV004"
    ]


@pytest.mark.parametrize("value", ["-1", "abc", "2.5"])
def test_an_unreadable_n_gpu_layers_is_not_its_default(value):
    kv005, (kv004,) = _findings("--n-gpu-layers", value)
    assert len(kv005) == 1 and kv005[0].where.line == 8 and "--n-gpu-layers" in kv005[0].message
    assert "unreadable --n-gpu-layers" in kv004.message and "its default" not in kv004.message


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("--max-batch-total-tokens", "-5"), "--max-batch-total-tokens"),
        (("--max-batch-size", "0"), "--max-batch-size"),
        (("--max-batch-size", "x"), "--max-batch-size"),
        (("--n-threads", "-2"), "--n-threads"),
    ],
)
def test_an_unreadable_size_leaves_n_ctx_unknown(args, option):
    kv005, (kv004,) = _findings("--n-gpu-layers", "99", *args)
    assert len(kv005) == 1 and kv005[0].where.line == 8
    assert f"n_ctx = unknown: {option} is unreadable" in kv004.message
    assert "KV cache on the GPU" not in kv004.message  # not priced from a guess


def test_a_stated_zero_is_named_as_stated_and_readable_options_still_price():
    _, (kv004,) = _findings("--n-gpu-layers", "0")
    assert "--n-gpu-layers 0 (as stated)" in kv004.message
    _, (kv004,) = _findings("--n-gpu-layers", "99", "--max-batch-size", "4", "--n-threads", "-2")
    assert "n_ctx = 8,192 cells" in kv004.message  # max_batch_size wins; the unreadable n_threads is not used


def test_clap_spells_the_cache_types_kebab_case():
    """LlamacppGGMLType derives clap::ValueEnum with no rename (backend.rs at v3.3.7), so `--type-k q8-0` is
    how Q8_0 is written on the command line; it is priced as q8_0 (34 bytes a 32-value block)."""
    args = ("--n-gpu-layers", "99", "--max-batch-size", "4", "--type-k", "q8-0", "--type-v", "q8-0")
    _, (kv004,) = _findings(*args)
    assert "1.0625 + 1.0625 B" in kv004.message


def test_tgi_speculate_zero_is_no_speculation():
    """TGI's --speculate 0 is no speculation (models/model.py `if speculate != 0`): no KV004 saying its blocks
    hold more tokens; 2 is said."""
    text = """apiVersion: v1
kind: Pod
metadata: {name: tgi}
spec:
  containers:
  - name: tgi
    image: ghcr.io/huggingface/text-generation-inference:3.3.5
    args: [--model-id, meta-llama/Llama-3.1-8B-Instruct, --speculate, "%s"]
    resources: {limits: {nvidia.com/gpu: 1}}
"""
    assert not [f for f in lint(text % "0").findings if f.rule == "KV004"]
    assert [f.where.line for f in lint(text % "2").findings if f.rule == "KV004"] == [8]
