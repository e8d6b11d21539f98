"""KV005 unparsed-setting: a value kvlint needs that it cannot read, named and located."""

from __future__ import annotations

from conftest import lint
from issue_cases import vllm_pod
from rulecase import findings


def test_an_unset_variable_in_a_needed_flag():
    r = lint(vllm_pod('["--model=meta-llama/Llama-3.1-8B-Instruct", "--max-model-len=$(MAX_LEN)"]'))
    (f,) = findings(r, "KV005")
    assert "--max-model-len" in f.message and f.where.line == 11  # the args line
    assert any(d.startswith("skipped: ") and "KV102" in d for d in f.details)  # the capacity rules it stopped


def test_a_misspelled_flag_is_named():
    r = lint(vllm_pod('["--model=meta-llama/Llama-3.1-8B-Instruct", "--max-model-lenn=4096"]'))
    (f,) = findings(r, "KV005")
    assert "--max-model-lenn" in f.message


def test_readable_flags_raise_nothing():
    assert not findings(
        lint(vllm_pod('["--model=meta-llama/Llama-3.1-8B-Instruct", "--max-model-len=4096"]')), "KV005"
    )
