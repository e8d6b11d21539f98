"""Every output format on the fixtures: SARIF against the official schema, GitHub escaping,
concise lines, Markdown tables and pies, and a stdout that carries only the report."""

import json

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, shared, shared_params

from kvlint.cli import main
from kvlint.report.github import escape_data, escape_property

BAD = str(FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml")
GOOD = str(FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml")


def run(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def sarif_schema():
    return json.loads(shared("reference", "sarif", "sarif-schema-2.1.0.json").read_text())


SARIF_RUNS = [[BAD], [GOOD], [str(FIXTURES)]]
SARIF_IDS = ["findings", "empty", "all-fixtures"]


@pytest.mark.parametrize(
    "paths", shared_params(("reference", "sarif", "sarif-schema-2.1.0.json"), SARIF_RUNS, ids=SARIF_IDS)
)
def test_sarif_validates_against_the_schema(paths):
    import jsonschema

    jsonschema.validate(json.loads(run(*paths, "--format", "sarif").output), sarif_schema())


@pytest.mark.parametrize("paths", SARIF_RUNS, ids=SARIF_IDS)
def test_sarif_rules_are_sorted_and_described(paths):
    doc = json.loads(run(*paths, "--format", "sarif").output)
    (run_,) = doc["runs"]
    assert "results" in run_  # present even when empty (kube-linter#213)
    rules = run_["tool"]["driver"]["rules"]
    assert [x["id"] for x in rules] == sorted(x["id"] for x in rules)
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
        assert rule["helpUri"].endswith(f"/rules/{rule['id']}.md")


def test_sarif_points_at_the_value_with_relative_uris():
    doc = json.loads(run(BAD, "--format", "sarif").output)
    (result,) = doc["runs"][0]["results"]
    loc = result["locations"][0]["physicalLocation"]
    assert not loc["artifactLocation"]["uri"].startswith("/")
    assert loc["region"] == {"startLine": 6, "startColumn": 14, "endLine": 6, "endColumn": 20}
    assert result["ruleId"] == "KV102" and result["level"] == "error"
    assert doc["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "KV102"


def test_sarif_is_stable_across_runs():
    assert run(str(FIXTURES), "--format", "sarif").output == run(str(FIXTURES), "--format", "sarif").output


def test_github_annotations():
    r = run(BAD, "--format", "github")
    (line,) = r.output.splitlines()
    assert line.startswith("::error file=")
    assert ",line=6,col=14,endLine=6,endColumn=20,title=KV102 kv-cache-below-max-context::" in line
    assert "%0Afix: set max_context" in line and "\n" not in line.strip()


def test_github_escaping():
    assert escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_github_is_chosen_under_github_actions():
    r = run(BAD, env={"GITHUB_ACTIONS": "true"})
    assert r.output.startswith("::error ")


def test_concise():
    r = run(BAD, "--format", "concise")
    assert r.output.splitlines() == [r.output.strip()]
    assert r.output.startswith(f"{BAD.split('/')[-3] if False else ''}") and ":6:14: error KV102 " in r.output


def test_markdown_table_and_pie():
    r = run(BAD, GOOD, "--format", "markdown")
    md = r.output
    assert (
        "| deployment | model | GPU × count | context | sequences | KV tokens | max concurrency | verdict |"
        in md
    )
    assert "❌ KV102" in md and "✅ fits" in md
    assert md.count("```mermaid") == 2 and '"Weights" : 14.99' in md and '"KV cache pool"' in md
    assert "### Findings" in md


def test_output_file_keeps_stdout_empty(tmp_path):
    out = tmp_path / "report.sarif"
    r = run(BAD, "--format", "sarif", "--output", str(out))
    assert r.exit_code == 1 and r.output == ""
    assert json.loads(out.read_text())["version"] == "2.1.0"


def test_text_colour_honours_no_color_and_force_color():
    plain = run(BAD, env={"NO_COLOR": "1"}).output
    assert "\x1b[" not in plain
    forced = run(BAD, env={"FORCE_COLOR": "1", "NO_COLOR": ""}).output
    assert "\x1b[1;31merror\x1b[0m" in forced
    summary = plain.strip().splitlines()[-1]
    assert summary == "kvlint: 1 finding (1 error); 1 fixable with --unsafe-fixes"
