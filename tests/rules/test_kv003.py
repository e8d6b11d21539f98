"""KV003 unknown-model: a model kvlint cannot find, with suggestions and the rules it skipped."""

from __future__ import annotations

from rulecase import findings, run


def test_unknown_model_suggests_and_names_skipped_rules():
    (f,) = findings(run(model="meta-llama/Llama-3.1-8B-Instrukt", gpu="H100", max_context=4096), "KV003")
    assert "meta-llama/Llama-3.1-8B-Instrukt" in f.message
    assert "did you mean" in (f.fix or "") and "meta-llama/Llama-3.1-8B-Instruct" in (f.fix or "")
    assert f.details[-1].startswith("skipped: ") and "KV101" in f.details[-1]


def test_a_declared_architecture_stands_in_for_an_unknown_model():
    r = run(
        model="acme/private-8b",
        gpu="H100",
        max_context=4096,
        architecture={
            "layers": 32,
            "query_heads": 32,
            "kv_heads": 8,
            "head_dim": 128,
            "hidden_size": 4096,
            "params": "8B",
            "max_positions": 8192,
        },
    )
    assert not findings(r, "KV003")
