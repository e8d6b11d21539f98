"""KV004 not-checkable: a serving workload kvlint recognises but does not model, and why."""

from __future__ import annotations

from conftest import lint
from rulecase import findings


def test_an_unrendered_helm_template_is_one_finding():
    r = lint("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.name }}\n")
    (f,) = findings(r, "KV004")
    assert "unrendered Helm template" in f.message and "helm template" in (f.fix or "")


def test_a_plain_gpu_workload_is_checkable():
    text = (
        "kind: ServingSpec\nname: x\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: H100\nmax_context: 4096\n"
    )
    assert not findings(lint(text), "KV004")
