"""Configuration cannot silently rewrite facts (security review F20, F23, F27).

- F20: a config `gpus:` / `models:` entry that replaces a shipped catalog entry is reported, located,
  in every report and by `kvlint config`.
- F23: the validated-configuration cache is untrusted: entries are named by a hash of kvlint's
  version, the schema and the input, and their values are never believed (derived again from the
  input and compared), so a crafted entry changes nothing.
- F27: `--jobs` workers get the settings the main process validated; a configuration edited during
  the run cannot make them disagree (or crash).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, ROOT

from kvlint.cli import main
from kvlint.run import config_cache

KV102 = (FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text()  # 128k context on one L4
TINY = (
    "{model_type: llama, hidden_size: 512, num_attention_heads: 8, num_key_value_heads: 1, "
    "num_hidden_layers: 2, vocab_size: 1000, max_position_embeddings: 131072, intermediate_size: 1024, "
    "torch_dtype: bfloat16}"
)
# The review's two reproducers: a GPU and a model the catalog ships, rewritten by the configuration.
GPU_OVERRIDE = 'gpus:   [{id: l4, name: NVIDIA L4, memory: 800GiB, compute-capability: "8.9"}]\n'
MODEL_OVERRIDE = f"models: [{{id: meta-llama/Llama-3.1-8B-Instruct, config: {TINY}}}]\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "deploy.yaml").write_text(KV102)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KVLINT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# ---- F20 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [GPU_OVERRIDE, MODEL_OVERRIDE], ids=["gpu", "model"])
def test_f20_an_override_of_a_shipped_entry_is_reported_in_every_report(project, config):
    (project / ".kvlint.yaml").write_text(config)
    what = "gpus: 'l4'" if "gpus" in config else "models: 'meta-llama/Llama-3.1-8B-Instruct'"
    text = run("deploy.yaml")
    assert "kvlint: note: .kvlint.yaml:1:" in text.stdout and what in text.stdout
    assert "replaces kvlint's catalog entry" in text.stdout
    assert what in run("--format", "concise", "deploy.yaml").stdout
    github = run("--format", "github", "deploy.yaml").stdout
    assert any(line.startswith("::warning title=kvlint configuration::") for line in github.splitlines())
    doc = json.loads(run("--format", "json", "deploy.yaml").stdout)
    (note,) = doc["config_overrides"]
    assert note["where"].startswith(".kvlint.yaml:1:") and what in note["message"]
    sarif = json.loads(run("--format", "sarif", "deploy.yaml").stdout)
    (notice,) = sarif["runs"][0]["invocations"][0]["toolConfigurationNotifications"]
    assert what in notice["message"]["text"]
    assert what in run("--format", "markdown", "deploy.yaml").stdout.replace("\\", "")
    shown = run("config").stdout
    assert "replaces kvlint's shipped catalog" in shown and what in shown
    assert ("gpus                 l4" in shown) == ("gpus" in config)


def test_f20_new_entries_are_listed_but_not_flagged(project):
    (project / ".kvlint.yaml").write_text(
        f"gpus: [{{id: acme-x1, memory: 40GiB}}]\nmodels: [{{id: acme/tiny, config: {TINY}}}]\n"
    )
    shown = run("config").stdout
    assert "acme-x1" in shown and "acme/tiny" in shown and "replaces" not in shown
    assert "note:" not in run("deploy.yaml").stdout
    assert json.loads(run("--format", "json", "deploy.yaml").stdout)["config_overrides"] == []


def test_f20_entries_of_an_earlier_run_do_not_leak_into_the_next(project):
    (project / ".kvlint.yaml").write_text(GPU_OVERRIDE)
    assert run("deploy.yaml").exit_code == 0  # 800 GiB "L4": the configuration's figures, with a note
    assert run("--isolated", "deploy.yaml").exit_code == 1  # the shipped L4 again: KV102


# ---- F23 --------------------------------------------------------------------------------------


def _entries(project) -> list:
    return sorted((project / "cache").glob("config-*.json"))


def test_f23_a_crafted_cache_entry_is_ignored(project):
    (project / ".kvlint.yaml").write_text("fail-on: error\n")
    assert run("deploy.yaml").exit_code == 1  # KV102; the validated input is cached
    (entry,) = _entries(project)
    saved = json.loads(entry.read_text())
    assert set(saved) == {"input", "values", "stated"}
    for values in (
        {**saved["values"], "ignore": ["ALL"]},  # the review's poisoning: report nothing
        {**saved["values"], "ignore": None},  # malformed: was a TypeError traceback
        "not a mapping",
    ):
        entry.write_text(json.dumps({**saved, "values": values}))
        r = run("--format", "concise", "deploy.yaml")
        assert r.exit_code == 1 and "KV102" in r.stdout, r.stdout
    entry.write_text("{")  # a truncated file
    assert run("deploy.yaml").exit_code == 1


def test_f23_entries_are_named_by_content_and_version_not_by_path(project, monkeypatch):
    data = {"fail-on": "warning"}
    key = config_cache._key(data)
    assert key == config_cache._key(json.loads(json.dumps(data)))
    assert key != config_cache._key({"fail-on": "error"})
    monkeypatch.setattr("kvlint.__version__", "0.0.0-other")
    assert config_cache._key(data) != key  # another kvlint never reads this entry


def test_f23_a_fifo_or_device_in_the_cache_is_not_read(project):
    (project / ".kvlint.yaml").write_text("fail-on: error\n")
    assert run("deploy.yaml").exit_code == 1
    (entry,) = _entries(project)
    entry.unlink()
    os.mkfifo(entry)
    probe = "from kvlint.cli import main\nmain(['deploy.yaml'])\n"
    env = {**os.environ, "KVLINT_CACHE_DIR": str(project / "cache")}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "KV102" in out.stdout
    entry.unlink()
    entry.symlink_to("/dev/zero")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "KV102" in out.stdout


def test_f23_writing_the_cache_never_follows_a_planted_link(project):
    victim = project / "victim.txt"
    victim.write_text("precious\n")
    entry = config_cache._entry(config_cache._as_json({"fail-on": "error"}))
    assert entry is not None
    os.makedirs(os.path.dirname(entry), exist_ok=True)
    os.symlink(victim, f"{entry}.{os.getpid()}.tmp")
    config_cache.store({"fail-on": "error"}, {"fail_on": "error"}, ["fail_on"])
    assert victim.read_text() == "precious\n"


def test_shipped_schema_is_the_models_own():
    from kvlint.run.config import _model

    shipped = json.loads((ROOT / "kvlint" / "run" / "config_schema.json").read_text())
    assert shipped == _model().model_json_schema(), (
        "regenerate kvlint/run/config_schema.json from config._model()"
    )


CONFIGS = [
    {},
    {"select": ["KV1"], "ignore": ["KV004"], "fail-on": "warning", "severity": {"KV103": "error"}},
    {"per-file-ignores": {"examples/*": ["KV103"]}, "headroom-margin": 1, "fragmentation": 0.05},
    {"gpu": "H100", "engine": "sglang", "engine-version": "0.4", "max-file-size": 1000, "strict": True},
    {"gpus": [{"id": "h20", "memory": "95GiB", "compute-capability": "9.0", "labels": {"a": ["b"]}}]},
    {"models": [{"id": "acme/x", "aliases": ["x"], "config": {"hidden_size": 1, "nested": {"a": [1]}}}]},
    {"fleet": ["L4", "H100"], "exclude": ["x/*"], "respect-gitignore": False, "format": "json"},
]


@pytest.mark.parametrize("data", CONFIGS)
def test_values_derived_without_pydantic_are_pydantics(data):
    from kvlint.run.config import _model

    cfg = _model().model_validate(data)
    derived = config_cache.derive(config_cache._as_json(data), config_cache._schema())
    assert derived is not None
    assert config_cache._as_json(derived[0]) == config_cache._as_json(cfg.model_dump())
    assert derived[1] == sorted(cfg.model_fields_set)


@pytest.mark.parametrize(
    "data",
    [
        {"fail-on": "bogus"},
        {"fragmentation": 1.0},
        {"headroom-margin": float("nan")},
        {"max-file-size": 0},
        {"ignore": None},
        {"gpus": [{"id": "x"}]},  # memory is required
        {"unknown": 1},
        {"fail-on": "error", "fail_on": "error"},  # one setting spelt twice
        {"max-file-size": "100"},  # pydantic would coerce it: pydantic decides
    ],
)
def test_inputs_the_schema_refuses_are_left_to_pydantic(data):
    assert config_cache.derive(data, config_cache._schema()) is None


# ---- F27 --------------------------------------------------------------------------------------


def test_f27_a_config_edited_during_a_jobs_run_changes_nothing(project, monkeypatch, force_workers):
    """The review's race made deterministic: the configuration is broken after the main process
    read it and before the workers start (discovery runs in between)."""
    (project / ".kvlint.yaml").write_text(
        "gpus: [{id: acme-x1, name: ACME X1, memory: 8GiB}]\nfail-on: warning\n"
    )
    spec = "kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: acme-x1\nmax_context: 4096\n"
    for i in range(40):
        (project / f"d{i:02d}.yaml").write_text(spec)
    import kvlint.run.discover

    real = kvlint.run.discover.discover

    def racing(*args, **kwargs):
        (project / ".kvlint.yaml").write_text("fail-on: [bogus\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(kvlint.run.discover, "discover", racing)
    outs = []
    for jobs in ("1", "2", "4"):
        (project / ".kvlint.yaml").write_text(
            "gpus: [{id: acme-x1, name: ACME X1, memory: 8GiB}]\nfail-on: warning\n"
        )
        outs.append(CliRunner().invoke(main, ["--format", "concise", "--jobs", jobs, "."]))
    assert all(o.exception is None or isinstance(o.exception, SystemExit) for o in outs), outs[1].exception
    assert outs[0].exit_code == outs[1].exit_code == outs[2].exit_code == 1
    assert outs[0].stdout == outs[1].stdout == outs[2].stdout
    assert outs[0].stdout.count("KV101") == 40  # the workers saw the 8 GiB card of the first read


def test_f27_workers_get_the_validated_settings_and_their_catalog_entries(project):
    from kvlint.catalog import gpus
    from kvlint.run import workers
    from kvlint.run.config import load_settings

    (project / ".kvlint.yaml").write_text("gpus: [{id: acme-x1, memory: 8GiB}]\n")
    settings = load_settings()
    copy = pickle.loads(pickle.dumps(settings))  # what a spawned worker receives
    gpus.register_gpus([])  # a fresh process: the shipped catalog only
    assert gpus.by_id("acme-x1") is None
    workers._init(copy, True)
    assert gpus.by_id("acme-x1") is not None and workers._settings is copy
