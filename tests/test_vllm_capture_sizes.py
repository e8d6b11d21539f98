"""vLLM --cudagraph-capture-sizes (nargs '+', type int; vllm==0.33.0 engine/arg_utils.py:1824) and 0.10's
--cuda-graph-sizes: every word up to the next option is a size. A word int() refuses makes argparse exit (and a
negative size kvlint does not read): a located KV005 and no plan, not a plan on the sizes before it (or on 512)."""

from __future__ import annotations

import pytest
from conftest import lint

POD = """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
  containers:
  - name: vllm
    image: vllm/vllm-openai:%s
    args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, "8192", %s]
    resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(
    ("tag", "args", "word"),
    [
        ("v0.33.0", "--cudagraph-capture-sizes, '1', '2', x", "'x'"),
        ("v0.33.0", "--cudagraph-capture-sizes, '-4'", "'-4'"),
        ("v0.10.2", "--cuda-graph-sizes, abc", "'abc'"),
    ],
)
def test_a_size_that_is_not_a_whole_number_is_kv005_and_no_plan(tag, args, word):
    result = lint(POD % (tag, args))
    (kv005,) = [f for f in result.findings if f.rule == "KV005"]
    assert word in kv005.message and kv005.where.line == 9
    assert result.deployments[0].plan is None


def test_the_largest_size_of_a_list_is_read():
    result = lint(POD % ("v0.33.0", "--cudagraph-capture-sizes, '1', '2', '16', --enforce-eager"))
    assert not [f for f in result.findings if f.rule == "KV005"]
    assert result.deployments[0].deployment.extra["max_cudagraph_capture_size"].value == 16


@pytest.mark.parametrize(
    "config",
    [
        '{"max_cudagraph_capture_size": "x"}',
        '{"cudagraph_capture_sizes": [1, "a"]}',
        '{"cudagraph_capture_sizes": 8}',
    ],
)
def test_compilation_config_sizes_that_are_not_whole_numbers_are_kv005(config):
    """CompilationConfig (a pydantic dataclass; vllm==0.22.0:vllm/config/compilation.py:631, 675) takes
    max_cudagraph_capture_size: int and cudagraph_capture_sizes: list[int]; other values stop vLLM."""
    result = lint(POD % ("v0.33.0", f"--compilation-config, '{config}'"))
    (kv005,) = [f for f in result.findings if f.rule == "KV005"]
    assert "CompilationConfig" in kv005.message and kv005.where.line == 9
    assert result.deployments[0].plan is None


def test_compilation_config_sizes_in_pydantic_lax_form_are_read():
    for config, size in (
        ('{"max_cudagraph_capture_size": "16"}', 16),
        ('{"cudagraph_capture_sizes": [1, 32.0]}', 32),
    ):
        result = lint(POD % ("v0.33.0", f"--compilation-config, '{config}'"))
        assert not [f for f in result.findings if f.rule == "KV005"]
        assert result.deployments[0].deployment.extra["max_cudagraph_capture_size"].value == size
