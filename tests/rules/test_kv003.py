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


def test_not_real_ids_get_the_closest_catalogued_ids_and_the_pull_command():
    # Placeholder / misspelt ids from the corpus (AIBrix Ascend sample, kthena docs): they stay unknown (a
    # fuzzy match would be a guess), but the message names the closest real ids and how to make one known.
    (f,) = findings(run(model="Qwen-2.5-0.5B", gpu="H100", max_context=4096), "KV003")
    assert "not a Hub id" in f.message and "kvlint models pull ORG/NAME" in f.message
    assert "Qwen/Qwen2.5-0.5B" in (f.fix or "") and "kvlint models pull" in (f.fix or "")
    (f,) = findings(run(model="deepseek-ai/DeepSeekV2", gpu="H100", max_context=4096), "KV003")
    assert "`kvlint models pull deepseek-ai/DeepSeekV2`" in f.message
    assert (f.fix or "").startswith("did you mean deepseek-ai/DeepSeek-V2,")
