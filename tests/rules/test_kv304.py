"""KV304 ambiguous-size-suffix: 32k is 32,000 tokens in vLLM; 80G is 80 x 10^9 bytes in Kubernetes."""

from __future__ import annotations

import pytest
from conftest import lint
from rulecase import findings


def _vllm(context: str, memory: str = "64Gi") -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-a100-80gb}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
          args: ["--max-model-len={context}", "--max-num-seqs=2"]
          resources: {{limits: {{nvidia.com/gpu: "1", memory: {memory}}}}}
"""


@pytest.mark.parametrize(
    ("context", "flagged"), [("32k", True), ("32K", False), ("32768", False), ("32000", False)]
)
def test_lowercase_token_suffix(context, flagged):
    got = findings(lint(_vllm(context)), "KV304")
    assert bool(got) is flagged
    if flagged:
        assert "32,000 tokens" in got[0].message and "32,768" in got[0].message


@pytest.mark.parametrize(("memory", "flagged"), [("80G", True), ("80Gi", False), ("85899345920", False)])
def test_decimal_memory_quantity(memory, flagged):
    got = findings(lint(_vllm("32768", memory)), "KV304")
    assert bool(got) is flagged
    if flagged:
        assert "not 80Gi" in got[0].message


@pytest.mark.parametrize("letter", ["k", "m", "g"])
@pytest.mark.parametrize("number", ["1", "4", "32", "36", "128", "2.5"])
def test_the_safe_fix_never_changes_the_number_the_engine_reads(number, letter):
    """KV304's safe fix spells the count out; whatever it writes parses to what the suffix gave vLLM
    (human_readable_int: lowercase is decimal). The power of two, when offered, is unsafe."""
    from kvlint.units import parse_count

    text = f"{number}{letter}"
    got = findings(lint(_vllm(text)), "KV304")
    (f,) = got
    safe = [x for x in f.fixes if x.applicability == "safe"]
    assert len(safe) == 1
    assert parse_count(safe[0].edits[0].text).value == parse_count(text).value
    for other in f.fixes:
        if other.applicability != "safe":
            assert other.applicability == "unsafe"
            assert parse_count(other.edits[0].text).value != parse_count(text).value


def test_fix_then_relint_keeps_the_context_and_is_clean(tmp_path):
    """The issue's case: `max_context: 36k` fixed to 36864 became 36,000 -> 36,864 and could fail KV102.
    --fix now writes 36000: the context the engine runs with is unchanged and KV304 is gone."""
    import subprocess
    import sys

    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "kind: ServingSpec\nname: s\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nmax_context: 36k\n"
        "max_sequences: 1\n"
    )
    before = lint(spec.read_text())
    run = subprocess.run(
        [sys.executable, "-m", "kvlint", "--isolated", "--fix", str(spec)], capture_output=True
    )
    assert "max_context: 36000\n" in spec.read_text(), run.stderr
    after = lint(spec.read_text())
    assert (
        after.deployments[0].deployment.max_context.value
        == before.deployments[0].deployment.max_context.value
    )
    assert {f.rule for f in after.findings} == {f.rule for f in before.findings} - {"KV304"}
