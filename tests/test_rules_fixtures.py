"""Every rule has fixtures: each bad-*.yaml triggers exactly that rule, each good-*.yaml nothing."""

from pathlib import Path

import pytest
from conftest import FIXTURES

from kvlint.rules import all_rules
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

BAD = sorted(FIXTURES.glob("KV*/bad*.yaml"))
GOOD = sorted(FIXTURES.glob("KV*/good*.yaml"))


def lint_file(path: Path):
    result = read_and_lint(str(path), Settings(), str(path.relative_to(FIXTURES.parent)))
    assert not isinstance(result, str), result
    return result


@pytest.mark.parametrize("path", BAD, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_bad_fixture_triggers_exactly_its_rule(path):
    result = lint_file(path)
    rules = {f.rule for f in result.findings}
    assert rules == {path.parent.name}, [f"{f.where} {f.rule} {f.message}" for f in result.findings]
    for f in result.findings:
        assert f.where.line >= 1 and f.message


@pytest.mark.parametrize("path", GOOD, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_good_fixture_is_clean(path):
    result = lint_file(path)
    assert result.findings == [], [f"{f.where} {f.rule} {f.message}" for f in result.findings]


def test_every_rule_has_a_failing_and_a_passing_fixture():
    for rule in all_rules():
        assert list((FIXTURES / rule.id).glob("bad*.yaml")), f"{rule.id} has no failing fixture"
        assert list((FIXTURES / rule.id).glob("good*.yaml")), f"{rule.id} has no passing fixture"


def test_kv102_points_at_the_max_context_value():
    (f,) = lint_file(FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").findings
    assert (f.where.line, f.where.column) == (6, 14)  # the max_context value, not the document start


def test_kv103_reports_real_concurrency_and_context():
    import math
    import re

    (f,) = lint_file(FIXTURES / "KV103" / "bad-too-many-sequences.yaml").findings
    real = float(re.search(r"only (\d+\.\d+) run at full length", f.message).group(1))
    assert 1.5 < real < 2.3  # 4.3 GiB of pool (untagged image: utilization 0.92) / 2 GiB per 16k sequence
    assert f"max_sequences {math.floor(real)} holds every admitted request at full length" in f.fix


def test_defaults_are_named_in_messages():
    from conftest import lint

    r = lint("kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\n")
    (f,) = [f for f in r.findings if f.rule == "KV102"]
    assert "max_model_len derived from the model config (max_position_embeddings=131,072)" in f.message
    assert f.where.line == 2  # the default comes from the model, so the model line is blamed


def test_findings_name_a_model_not_found_by_its_exact_id(tmp_path):
    """A capacity finding on a model found another way than its exact catalog id says how (text
    detail line); the JSON deployment carries `model_resolution` either way."""
    import json

    from click.testing import CliRunner

    from kvlint.cli import main

    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "architectures": ["LlamaForCausalLM"],
                "model_type": "llama",
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "max_position_embeddings": 131072,
                "vocab_size": 128256,
                "torch_dtype": "bfloat16",
                "rope_theta": 500000.0,
            }
        )
    )
    spec = tmp_path / "d.yaml"
    spec.write_text(f"kind: ServingSpec\nname: local\nmodel: {config}\ngpu: L4\nmax_context: 131072\n")
    text = CliRunner().invoke(main, ["--isolated", str(spec)]).output
    assert "KV102" in text and f"model facts: local file {config}" in text
    data = json.loads(CliRunner().invoke(main, ["--isolated", "--format", "json", str(spec)]).output)
    (dep,) = data["deployments"]
    assert dep["model_resolution"] == f"local file {config}"
    exact = json.loads(
        CliRunner()
        .invoke(
            main, ["--isolated", "--format", "json", str(FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml")]
        )
        .output
    )
    assert exact["deployments"][0]["model_resolution"] == "kvlint catalog"
    assert not any("model facts:" in d for f in exact["findings"] for d in f["details"])


def test_tgi_prefill_checks_follow_the_release(tmp_path):
    """TGI's launcher refused max_batch_prefill_tokens below max_input_tokens up to v2.3 (launcher/src/main.rs
    'Validate args'); v2.4 dropped the check with chunked prefill, so the same layout on 3.0.1 starts."""
    bad = (FIXTURES / "KV205" / "bad-tgi-prefill-below-input.yaml").read_text()
    newer = tmp_path / "tgi-3.yaml"
    newer.write_text(bad.replace("text-generation-inference:2.0.0", "text-generation-inference:3.0.1"))
    result = read_and_lint(str(newer), Settings(), "tgi-3.yaml")
    assert not isinstance(result, str), result
    assert "KV205" not in {f.rule for f in result.findings}
    assert {f.rule for f in lint_file(FIXTURES / "KV205" / "bad-tgi-prefill-below-input.yaml").findings} == {
        "KV205"
    }
