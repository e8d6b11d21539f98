"""`kvlint plan` end to end: the command line, text and JSON, and the ways it refuses."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kvlint.capacity.sizing import CONTEXTS
from kvlint.units import GIB


def plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kvlint", "plan", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"NO_COLOR": "1", "PATH": ""},
    )


@pytest.fixture(scope="module")
def llama_h100() -> tuple[str, dict]:
    text = plan("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100")
    data = plan("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100", "-f", "json")
    assert text.returncode == 0 and data.returncode == 0, text.stdout + text.stderr + data.stderr
    return text.stdout, json.loads(data.stdout)


def test_json_states_the_plan_in_integer_bytes(llama_h100):
    _, d = llama_h100
    assert d["model"] == "meta-llama/Llama-3.1-8B-Instruct" and d["gpu"] == "h100-sxm"
    assert d["engine"] == "vllm" and d["tensor_parallel"] == 1
    # 2 (K and V) x 8 KV heads x head_dim 128 x 2 bytes x 32 layers
    assert d["kv_bytes_per_token_per_gpu"] == 2 * 8 * 128 * 2 * 32
    for key in ("gpu_memory_bytes", "weights_bytes_per_gpu", "kv_cache_bytes_per_gpu", "kv_cache_tokens"):
        assert isinstance(d[key], int) and d[key] > 0, key
    assert d["kv_cache_tokens"] * d["kv_bytes_per_token_per_gpu"] <= d["kv_cache_bytes_per_gpu"]
    # 8.03B parameters in bfloat16
    assert 15.5e9 < d["weights_bytes_per_gpu"] < 16.5e9
    assert d["max_context"] == 131072  # the model's own maximum: --context not given
    assert set(d["defaults"]) == {"max_context", "max_sequences", "gpu_memory_utilization"}
    assert abs(sum(d["memory_shares"].values()) - 1) < 0.01


def test_concurrency_halves_as_the_context_doubles(llama_h100):
    _, d = llama_h100
    rows = d["concurrency_by_context"]
    assert [r["context"] for r in rows] == [c for c in CONTEXTS if c <= 131072]
    for a, b in zip(rows, rows[1:], strict=False):
        assert b["sequences_at_once"] == pytest.approx(a["sequences_at_once"] / 2, abs=0.02)
    assert all(r["fits"] == (r["sequences_at_once"] >= 1) for r in rows)
    assert rows[-1]["sequences_at_once"] == pytest.approx(d["max_concurrency"], abs=0.01)
    assert d["smallest_fit"] == {
        "gpus": 1,
        "tensor_parallel": 1,
        "sequences_at_once": rows[-1]["sequences_at_once"],
    }


def test_text_shows_the_same_figures(llama_h100):
    text, d = llama_h100
    lines = text.splitlines()
    assert (
        lines[0]
        == "meta-llama/Llama-3.1-8B-Instruct on 1 x NVIDIA H100 SXM5 80GB (79.18 GiB as the engine sees it), vLLM"
    )
    assert (
        f"  weights        {d['weights_bytes_per_gpu'] / GIB:.2f} GiB per GPU  ({d['weights_source']})"
        in lines
    )
    assert "  KV per token   128 KiB per GPU  (32 layers, 8 KV heads/GPU x head_dim 128)" in lines
    assert f"= {d['kv_cache_tokens']:,} tokens" in text
    bar = next(line for line in lines if line.startswith("  memory"))
    assert len(bar) == len("  memory         [") + 40 + 1 and bar.endswith("]")
    for row in d["concurrency_by_context"]:
        assert f"  {row['context']:>9,}    {row['sequences_at_once']:>10,.2f}" in lines
    assert (
        f"{d['max_sequences']:,} sequences get {d['longest_context_for_max_sequences']:,} tokens each" in text
    )
    assert "  smallest that fits: 1 x NVIDIA H100 SXM5 80GB (tensor_parallel 1)" in lines
    assert sum(line.startswith("  (max_") or line.startswith("  (gpu_memory") for line in lines) == 3


def test_a_model_too_large_names_the_smallest_fit():
    d = json.loads(plan("meta-llama/Llama-3.1-70B-Instruct", "--gpu", "L4", "-f", "json").stdout)
    assert d["weights_bytes_per_gpu"] > d["gpu_memory_bytes"]
    assert d["kv_cache_bytes_per_gpu"] < 0
    tp = d["smallest_fit"]["tensor_parallel"]
    assert tp > 1 and d["smallest_fit"]["sequences_at_once"] >= 1
    half = json.loads(
        plan("meta-llama/Llama-3.1-70B-Instruct", "--gpu", "L4", "--gpus", str(tp // 2), "-f", "json").stdout
    )
    assert half["max_concurrency"] < 1  # half as many GPUs cannot hold one sequence of the full context
    text = plan("meta-llama/Llama-3.1-70B-Instruct", "--gpu", "L4").stdout
    assert "  does not fit: weights 131.45 GiB per GPU" in text
    assert f"smallest that fits: {tp} x NVIDIA L4 (tensor_parallel {tp})" in text
    assert "context      sequences at once" not in text


def test_stated_options_reach_the_plan():
    d = json.loads(
        plan(
            "meta-llama/Llama-3.1-8B-Instruct",
            "--gpu",
            "L4",
            "--context",
            "32K",
            "--sequences",
            "4",
            "--kv-cache-dtype",
            "fp8",
            "-f",
            "json",
        ).stdout
    )
    assert d["max_context"] == 32768 and d["max_sequences"] == 4
    assert d["kv_bytes_per_token_per_gpu"] == 2 * 8 * 128 * 1 * 32  # fp8: one byte a value
    assert set(d["defaults"]) == {"gpu_memory_utilization"}
    d4 = json.loads(
        plan("meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100", "--gpus", "4", "-f", "json").stdout
    )
    assert d4["tensor_parallel"] == 4


@pytest.mark.parametrize(("engine", "name"), [("sglang", "SGLang"), ("tgi", "TGI")])
def test_other_engines_plan_with_their_own_accounting(engine, name):
    # an L40S: on an L4 the newest SGLang's default fraction (chunked prefill 4096 on 20-35 GB cards,
    # sglang 0.5.23 memory_hook.py) leaves Qwen3-8B's 15.3 GiB of weights no room for a KV pool
    text = plan("Qwen/Qwen3-8B", "--gpu", "L40S", "--engine", engine)
    data = json.loads(plan("Qwen/Qwen3-8B", "--gpu", "L40S", "--engine", engine, "-f", "json").stdout)
    assert text.returncode == 0
    assert text.stdout.splitlines()[0].endswith(f", {name}")
    assert data["engine"] == engine and data["kv_cache_tokens"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nosuch/model", "--gpu", "H100"), "kvlint: model 'nosuch/model'"),
        (
            ("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "Z9000"),
            "kvlint: GPU 'Z9000' is not in the kvlint catalog",
        ),
        (
            ("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100", "--context", "abc"),
            "kvlint: expected a whole number",
        ),
    ],
)
def test_what_cannot_be_planned_exits_2_with_a_reason(args, message):
    for fmt in ("text", "json"):
        r = plan(*args, "-f", fmt)
        assert r.returncode == 2
        assert (r.stdout + r.stderr).startswith(message), r.stdout + r.stderr
        assert "Traceback" not in r.stdout + r.stderr


def test_how_the_model_was_found_is_named():
    """An exact catalog id is said in JSON only; a model found another way is named in the text too."""
    exact = json.loads(plan("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100", "-f", "json").stdout)
    assert exact["model_resolution"] == "kvlint catalog"
    assert "model facts:" not in plan("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100").stdout
    ref = "casperhansen/llama-3-8b-instruct-awq"
    derived = json.loads(plan(ref, "--gpu", "L4", "-f", "json").stdout)
    assert derived["model_resolution"].startswith("matched by name: ")
    text = plan(ref, "--gpu", "L4").stdout
    assert f"  (model facts: {derived['model_resolution']})" in text.splitlines()
