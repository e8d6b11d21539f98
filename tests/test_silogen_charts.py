"""silogen/ai-workloads llm-inference-vllm / llm-inference-tgi chart values: what the charts'
values.schema.json refuses is a located KV005, not a plan on a default."""

from __future__ import annotations

import pytest
from conftest import shared, shared_params

from kvlint.resolve import Defaults
from kvlint.run.settings import Settings

SILOGEN_TGI = "silogen__ai-workloads__workloads__llm-inference-tgi__helm__values.yaml"


@pytest.mark.parametrize(
    ("old", "new", "line", "says"),
    shared_params(
        ("corpus", "manifests2", SILOGEN_TGI),
        [
            ("gpus: 1", "gpus: '2'", 8, "`gpus` '2' (a string)"),
            ("gpus: 1", "gpus: 2.5", 8, "`gpus` 2.5"),
            ("gpus: 1", "gpus: true", 8, "`gpus` true"),
            ("gpus: 1", "gpus: [1]", 8, "`gpus` (a list)"),
            ("gpus: 1", "gpus: 0", 8, "`gpus` 0"),
            ("tgi_engine_args:\n  {}", "tgi_engine_args:\n  max-total-tokens: [1, 2]", 16, "is a list"),
            ("tgi_engine_args:\n  {}", "tgi_engine_args:\n  max-total-tokens: {a: 1}", 16, "is a map"),
        ],
        width=4,
    ),
)
def test_silogen_values_helm_refuses_are_located_kv005_not_a_default(old, new, line, says):
    """silogen/ai-workloads llm-inference-tgi values.schema.json (@d77f9a36; the vLLM chart's @0df1e08a says
    the same): `gpus` is an integer, minimum 1, and each engine argument a string (or null), so Helm refuses
    anything else. kvlint said nothing and planned `gpus: '2'` as "TGI default --num-shard 1"; a list value
    took the next flag (--model-id) as its value and then reported the model as not stated."""
    from kvlint.run.lint import lint_text

    text = shared("corpus", "manifests2", SILOGEN_TGI).read_text()
    assert old in text
    result = lint_text(
        text.replace(old, new).encode(), "values.yaml", Settings(defaults=Defaults(gpu="mi300x")), "."
    )
    kv005 = [f for f in result.findings if f.rule == "KV005"]
    assert len(kv005) == 1 and says in kv005[0].message and kv005[0].where.line == line, kv005
    assert "Helm refuses" in kv005[0].message
    (r,) = result.deployments
    assert r.deployment.model is not None and r.deployment.model.value == "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
    if "gpus" in new:
        assert r.plan is None and "tensor_parallel" in r.deployment.unreadable  # not the chart's default 1
    assert not [f for f in result.findings if f.rule == "KV003"]
