"""Which model a workload names, read from real launch commands (../shared/corpus, in place)."""

from __future__ import annotations

from conftest import shared

from kvlint.lint import read_and_lint
from kvlint.settings import Settings


def test_trtllm_serve_subcommand_is_not_the_model():
    """`trtllm-serve serve MODEL`: `serve` is the subcommand (llm-d's TensorRT-LLM guide), the model follows."""
    name = "llm-d__llm-d__guides__optimized-baseline__modelserver__gpu__trtllm__base__patch-trtllm.yaml"
    result = read_and_lint(str(shared("corpus", "manifests2", name)), Settings(), name)
    assert not isinstance(result, str), result
    found = [d.deployment.model.value for d in result.deployments if d.deployment.model]
    assert found == ["Qwen/Qwen3-32B"]
