"""Repository content never silently replaces kvlint's facts or switches its checks off (security
review 3, S2, S3, S9, S19). A pulled entry for a catalogued model (S2), a directory named like a Hub id (S3),
`hub: true` in the configuration (S9) and configuration that disables rules (S19), each rebuilt
from the review's reproducer: the KV102 fixture, which without them is an error."""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML
from test_config_trust import KV102, TINY, run

from kvlint.catalog import pulled

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
TWO_LAYERS = YAML(typ="safe").load(TINY)  # the review's 2-layer config


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "deploy.yaml").write_text(KV102)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KVLINT_CACHE_DIR", str(tmp_path / "cache"))
    pulled._index.cache_clear()  # listed once per run; each test is a run in another directory
    yield tmp_path
    pulled._index.cache_clear()


def every_format(what: str) -> None:
    """`what` is reported in every format: a note, one ::warning, JSON, SARIF, Markdown."""
    assert what in run("deploy.yaml").stdout
    assert what in run("--format", "concise", "deploy.yaml").stdout
    github = [
        line
        for line in run("--format", "github", "deploy.yaml").stdout.splitlines()
        if line.startswith("::warning title=kvlint configuration::") and what in line
    ]
    assert len(github) == 1, github
    doc = json.loads(run("--format", "json", "deploy.yaml").stdout)
    assert any(what in o["message"] for o in doc["config_overrides"])
    sarif = json.loads(run("--format", "sarif", "deploy.yaml").stdout)
    notes = sarif["runs"][0]["invocations"][0]["toolConfigurationNotifications"]
    assert any(what in n["message"]["text"] for n in notes)
    assert what in run("--format", "markdown", "deploy.yaml").stdout.replace("\\", "")


def test_s02_a_pulled_copy_of_a_catalogued_model_is_reported(project):
    """S2: a committed .kvlint/models/meta-llama--Llama-3.1-8B-Instruct.json with 2 layers turned
    the KV102 error into "no problems found", exit 0, and the github format printed nothing."""
    models = project / ".kvlint" / "models"
    models.mkdir(parents=True)
    (models / "meta-llama--Llama-3.1-8B-Instruct.json").write_text(
        json.dumps({"id": MODEL, "config": TWO_LAYERS})
    )
    every_format(f"pulled copy of {MODEL} replaces kvlint's catalog entry")
    assert ".kvlint/models/meta-llama--Llama-3.1-8B-Instruct.json" in run("deploy.yaml").stdout
    assert "pulled copy" in run("--isolated", "deploy.yaml").stdout  # read whatever the config


def test_s03_a_directory_named_like_a_hub_id_does_not_shadow_it(project):
    """S3: meta-llama/Llama-3.1-8B-Instruct/config.json beside the manifest was read for
    `model: meta-llama/Llama-3.1-8B-Instruct`, silently (no problems found)."""
    shadow = project / "meta-llama" / "Llama-3.1-8B-Instruct"
    shadow.mkdir(parents=True)
    (shadow / "config.json").write_text(json.dumps(TWO_LAYERS))
    assert "KV102" in run("--format", "concise", "deploy.yaml").stdout  # the shipped facts
    for written in (f"./{MODEL}", f"local:{MODEL}", str(shadow)):  # written as a path: read
        (project / "deploy.yaml").write_text(KV102.replace(f"model: {MODEL}", f"model: {written}"))
        assert "KV102" not in run("--format", "concise", "deploy.yaml").stdout, written


def test_s09_hub_true_in_the_configuration_is_not_honoured(project, monkeypatch):
    """S9: `hub: true` in a PR's .kvlint.yaml sent requests to the Hub (with the runner's HF_TOKEN)
    for model ids the PR chose; nothing was said."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # any request would be refused, and said
    (project / "deploy.yaml").write_text(KV102.replace(MODEL, "acme/unknown-7b"))
    (project / ".kvlint.yaml").write_text("hub: true\n")
    every_format("hub: true is not honoured from a configuration file")
    out = run("--format", "json", "deploy.yaml").stdout
    assert "could not reach" not in out and "127.0.0.1:9" not in out  # no request was made


@pytest.mark.parametrize(
    "config, said",
    [
        ("ignore: [KV102, KV103]\n", "ignore: KV102, KV103"),
        ("select: [KV006]\n", "select: KV006 (turns off KV001"),
        ('per-file-ignores: {"*": [KV102, KV103]}\n', "per-file-ignores: '*': KV102, KV103"),
        ("severity: {KV102: info}\n", "severity: KV102 lowered from error to info"),
    ],
    ids=["ignore", "select", "per-file-ignores", "severity"],
)
def test_s19_configuration_that_disables_rules_is_listed_in_every_format(project, config, said):
    """S19: each of these in a PR's .kvlint.yaml gave "no problems found", exit 0, and the github
    format printed nothing."""
    (project / ".kvlint.yaml").write_text(config)
    every_format(said)


def test_s19_configuration_that_only_adds_or_raises_says_nothing(project):
    (project / ".kvlint.yaml").write_text("severity: {KV007: error}\nextend-select: [KV102]\n")
    assert "switches rules off" not in run("deploy.yaml").stdout


@pytest.mark.parametrize("choice", ["isolated", "base.kvlint.yaml"])
def test_s19_the_action_can_lint_with_a_configuration_the_pull_request_cannot_edit(project, choice):
    """S19: the Action's `config` input: `isolated`, or a file the workflow chose (the base branch's),
    so the PR's own .kvlint.yaml switching KV102 off does not turn the check green."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from test_action import _step

    (project / ".kvlint.yaml").write_text("ignore: [KV102, KV103]\n")
    (project / "base.kvlint.yaml").write_text("fail-on: error\n")
    out = project / "github_output"
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_OUTPUT": str(out),
        "KVLINT_PATHS": "deploy.yaml",
        "KVLINT_ARGS": "",
        "KVLINT_FORMAT": "github",
        "KVLINT_SARIF": "",
        "KVLINT_FAIL_ON": "error",
    }
    step = _step("Run kvlint")["run"]
    relaxed = subprocess.run(["bash", "-e", "-c", step], env=env, cwd=project, capture_output=True, text=True)
    assert relaxed.returncode == 0 and "switches rules off" in relaxed.stdout  # green, but said
    env["KVLINT_CONFIG"] = choice
    held = subprocess.run(["bash", "-e", "-c", step], env=env, cwd=project, capture_output=True, text=True)
    assert held.returncode == 1 and "KV102" in held.stdout, held.stdout + held.stderr
