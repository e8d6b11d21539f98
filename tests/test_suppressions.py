"""Inline suppressions, file suppressions, Kubernetes annotations, the CI switch, unused ones."""

from conftest import lint, rules_of

SPEC = """kind: ServingSpec
name: llama-8b
model: meta-llama/Llama-3.1-8B-Instruct
gpu: L4
max_context: 16384{trail}
{above}max_sequences: 64
"""


def spec(trail="", above=""):
    return SPEC.format(trail=trail, above=above)


def test_unsuppressed_reports_kv103():
    assert rules_of(lint(spec())) == ["KV103"]


def test_same_line_comment():
    r = lint(
        SPEC.replace("max_sequences: 64", "max_sequences: 64  # kvlint: disable=KV103 -- bursts only").format(
            trail="", above=""
        )
    )
    assert r.findings == []


def test_line_above_and_rule_name():
    assert lint(spec(above="# kvlint: disable=kv-cache-below-worst-case -- known\n")).findings == []


def test_comment_on_another_line_does_not_suppress():
    r = lint(spec(trail="  # kvlint: disable=KV103"))
    assert sorted(rules_of(r)) == ["KV006", "KV103"]  # trailing on line 5 covers line 5 only: unused


def test_file_level():
    assert lint("# kvlint: disable-file=KV103 -- sized for p50\n" + spec()).findings == []


def test_unknown_code_and_unreadable_comment_are_reported():
    r = lint(spec(above="# kvlint: disable=KV999\n"))
    assert sorted(rules_of(r)) == ["KV006", "KV103"]
    assert any("names no kvlint rule: KV999" in f.message for f in r.findings)
    r = lint(spec(above="# kvlint: disabel=KV103\n"))
    assert any(f.rule == "KV006" and "cannot read" in f.message for f in r.findings)


def test_no_inline_suppressions_switch():
    r = lint(spec(above="# kvlint: disable=KV103 -- known\n"), inline_suppressions=False)
    assert rules_of(r) == ["KV103"]


DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-8b
  annotations:
    kvlint.io/ignore: "{ignore}"
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "16384", "--max-num-seqs", "64"]
          resources:
            limits:
              nvidia.com/gpu: "1"
"""


def test_kubernetes_annotation():
    assert rules_of(lint(DEPLOY.format(ignore="KV101=not this one"))) == ["KV006", "KV103"]
    assert lint(DEPLOY.format(ignore="KV103=bursty traffic, autoscaled")).findings == []
    r = lint(DEPLOY.format(ignore="KV103=reason"), inline_suppressions=False)
    assert rules_of(r) == ["KV103"]
