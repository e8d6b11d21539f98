"""KV002 unknown-gpu: no GPU stated, a name not in the catalog, or an ambiguous one."""

from __future__ import annotations

from rulecase import findings, run


def test_no_gpu_names_the_rules_it_skipped():
    (f,) = findings(run(model="meta-llama/Llama-3.1-8B-Instruct", max_context=4096, gpu='""'), "KV002")
    assert f.details and f.details[-1].startswith("skipped: ") and "KV102" in f.details[-1]


def test_an_unknown_name_gets_suggestions():
    (f,) = findings(run(model="meta-llama/Llama-3.1-8B-Instruct", gpu="H10O", max_context=4096), "KV002")
    assert "not in the kvlint catalog" in f.message and "did you mean" in (f.fix or "")


def test_an_ambiguous_name_is_said_so():
    (f,) = findings(run(model="meta-llama/Llama-3.1-8B-Instruct", gpu="A100", max_context=4096), "KV002")
    assert "ambiguous" in f.message


def test_a_known_gpu_is_silent():
    assert not findings(run(model="meta-llama/Llama-3.1-8B-Instruct", gpu="H100", max_context=4096), "KV002")
