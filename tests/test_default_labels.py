"""The plan's arithmetic names the memory fraction as the engine's default when the deployment left it
unset (vLLM gpu_memory_utilization, SGLang mem_fraction_static, TGI CUDA_MEMORY_FRACTION), and prints it
bare when the deployment states it."""

from __future__ import annotations

import pytest
from conftest import lint

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
      containers:
      - name: server
        image: {image}
        args: {args}
{env}        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""

CASES = {
    "vllm": (
        "vllm/vllm-openai:v0.10.1",
        ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"],
        ["--gpu-memory-utilization", "0.85"],
        "",
        "x gpu_memory_utilization",
        "(vLLM default)",
    ),
    "sglang": (
        "lmsysorg/sglang:v0.5.4",
        ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"],
        ["--mem-fraction-static", "0.8"],
        "",
        "x mem_fraction_static",
        "(SGLang default)",
    ),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:3.2.0",
        ["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--max-total-tokens", "131072"],
        [],
        "        env: [{name: CUDA_MEMORY_FRACTION, value: '0.9'}]\n",
        "x CUDA_MEMORY_FRACTION",
        "(TGI default)",
    ),
}


def _fraction_lines(engine: str, stated: bool) -> list[str]:
    image, args, stated_args, stated_env, marker, _ = CASES[engine]
    text = MANIFEST.format(
        image=image,
        args=str(args + (stated_args if stated else [])).replace("'", '"'),
        env=stated_env if stated else "",
    )
    r = lint(text)
    lines = [line for f in r.findings for line in f.details if marker in line]
    assert lines, (engine, [f.message for f in r.findings])
    return lines


@pytest.mark.parametrize("engine", sorted(CASES))
def test_an_unset_fraction_is_named_as_the_engine_default(engine):
    label = CASES[engine][5]
    assert all(label in line for line in _fraction_lines(engine, stated=False))


@pytest.mark.parametrize("engine", sorted(CASES))
def test_a_stated_fraction_is_printed_without_the_default_label(engine):
    lines = _fraction_lines(engine, stated=True)
    assert not any("default)" in line for line in lines), lines
    assert any(v in lines[0] for v in (" 0.85", " 0.8", " 0.9")), lines
