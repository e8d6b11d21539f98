"""KV007 model-matched-by-name: a model id not catalogued, resolved to its base by name rules."""

from __future__ import annotations

from rulecase import findings, run


def test_a_derived_id_names_its_base_and_format():
    r = run(model="casperhansen/llama-3-8b-instruct-awq", gpu="L4", max_context=4096)
    (f,) = findings(r, "KV007")
    assert "matched by name" in f.message and "AWQ" in f.message
    (d,) = r.deployments
    assert d.model_how.startswith("matched by name: ")


def test_a_catalogued_id_is_not_a_name_match():
    assert not findings(run(model="meta-llama/Llama-3.1-8B-Instruct", gpu="L4", max_context=4096), "KV007")
