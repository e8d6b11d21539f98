"""A GPU count kvlint cannot read (compose `count: all`, which the Docker docs' own GPU snippet writes): the
capacity rules still run for an engine whose parallel sizes default to one GPU whatever it sees (vLLM,
SGLang, TensorRT-LLM, LMDeploy: Engine.sizes_from_gpu_count False), and wait for the count where they follow
it (TGI shards over every GPU it sees, llama.cpp splits its layers over them)."""

from __future__ import annotations

import pytest
from conftest import lint, rules_of

from kvlint.resolve import Defaults

COMPOSE = """services:
  llm:
    image: {image}
    command: {command}
    ipc: host
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
"""
CASES = {
    "vllm": ("vllm/vllm-openai:v0.10.1", "--model Qwen/Qwen2.5-7B-Instruct --max-model-len 32768"),
    "sglang": (
        "lmsysorg/sglang:v0.5.2-cu126",
        "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct",
    ),
    "tgi": ("ghcr.io/huggingface/text-generation-inference:3.3.4", "--model-id Qwen/Qwen2.5-7B-Instruct"),
    "llamacpp": (
        "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500",
        "-m /m/Qwen2.5-7B-Instruct-Q4_K_M.gguf -c 8192",
    ),
}


def _lint(engine: str):
    image, command = CASES[engine]
    result = lint(COMPOSE.format(image=image, command=command), "compose.yaml", defaults=Defaults(gpu="l4"))
    (r,) = result.deployments
    return r, result


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_an_engine_whose_sizes_default_to_one_gpu_is_planned(engine):
    r, result = _lint(engine)
    assert r.settings.engine == engine and r.plan is not None
    assert r.in_force.tensor_parallel.value == 1 and r.in_force.tensor_parallel.origin == "default"
    assert "KV005" in rules_of(result)  # the count itself is still said to be unknown
    assert "KV201" not in rules_of(result)  # idle or missing GPUs are not claimed on an unknown count


@pytest.mark.parametrize("engine", ["tgi", "llamacpp"])
def test_an_engine_that_spreads_over_every_gpu_waits_for_the_count(engine):
    r, result = _lint(engine)
    assert r.settings is None or r.plan is None
    assert not {"KV101", "KV102", "KV103"} & set(rules_of(result))


def test_the_plan_is_the_one_gpu_plan():
    r, _ = _lint("vllm")
    one = COMPOSE.format(image=CASES["vllm"][0], command=CASES["vllm"][1]).replace("count: all", "count: 1")
    (r1,) = lint(one, "compose.yaml", defaults=Defaults(gpu="l4")).deployments
    assert r.plan.kv_tokens == r1.plan.kv_tokens and r.plan.kv_pool == r1.plan.kv_pool
