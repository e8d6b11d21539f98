"""Configuration: discovery upward, pyproject and .kvlint.yaml, validation with located errors,
rule selection, severity overrides, fail-on, defaults, extra GPUs and models, `kvlint config`."""

import json
import textwrap

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from kvlint.cli import main

BAD_KV103 = FIXTURES / "KV103" / "bad-too-many-sequences.yaml"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "llama.yaml").write_text(BAD_KV103.read_text())
    monkeypatch.chdir(tmp_path / "deploy")
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_pyproject_discovered_upward(project):
    (project / "pyproject.toml").write_text('[tool.kvlint]\nfail-on = "warning"\n')
    assert run("llama.yaml").exit_code == 1
    assert run("llama.yaml", "--isolated").exit_code == 0


def test_kvlint_yaml_wins_in_its_directory_and_flags_win_over_both(project):
    (project / "pyproject.toml").write_text('[tool.kvlint]\nfail-on = "warning"\n')
    (project / ".kvlint.yaml").write_text("fail-on: error\n")
    assert run("llama.yaml").exit_code == 0
    assert run("llama.yaml", "--fail-on", "warning").exit_code == 1


def test_severity_override_and_ignore(project):
    (project / ".kvlint.yaml").write_text("severity: {KV103: error}\n")
    assert run("llama.yaml").exit_code == 1
    (project / ".kvlint.yaml").write_text("severity: {KV103: error}\nignore: [kv-cache-below-worst-case]\n")
    assert run("llama.yaml").exit_code == 0


def test_per_file_ignores(project):
    (project / ".kvlint.yaml").write_text('per-file-ignores: {"deploy/*.yaml": [KV103]}\nfail-on: warning\n')
    assert run("llama.yaml").exit_code == 0


def test_bad_config_is_a_located_error_exit_2(project):
    (project / ".kvlint.yaml").write_text("select: [KV1]\nfail_onn: warning\n")
    r = CliRunner().invoke(main, ["llama.yaml"])
    assert r.exit_code == 2
    assert ".kvlint.yaml:2:1: fail_onn: unknown setting" in r.output


def test_bad_pyproject_value_is_located(project):
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.kvlint]\nfragmentation = 1.5\n')
    r = CliRunner().invoke(main, ["llama.yaml"])
    assert r.exit_code == 2 and "pyproject.toml:5: fragmentation" in r.output


def test_headroom_margin(project):
    (project / "deploy" / "one.yaml").write_text(
        "kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\nmax_context: 16384\nmax_sequences: 1\n"
    )
    assert json.loads(run("one.yaml", "--format", "json").output)["findings"] == []
    (project / ".kvlint.yaml").write_text("headroom-margin: 1.5\n")  # ask for 2.5x what one sequence needs
    r = run("one.yaml", "--format", "json")
    assert [f["rule"] for f in json.loads(r.output)["findings"]] == ["KV103"]


MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata: {name: llama}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"]
          resources: {limits: {nvidia.com/gpu: "1"}}
"""


def test_default_gpu_from_config_or_flag(project):
    (project / "deploy" / "k8s.yaml").write_text(MANIFEST)
    assert [f["rule"] for f in json.loads(run("k8s.yaml", "--format", "json").output)["findings"]] == [
        "KV002"
    ]
    assert [
        f["rule"] for f in json.loads(run("k8s.yaml", "--gpu", "L4", "--format", "json").output)["findings"]
    ] == ["KV102"]
    (project / ".kvlint.yaml").write_text(
        "gpu: H200\n"
    )  # 128k fits on an H200; the default 1,024 sequences do not
    assert [f["rule"] for f in json.loads(run("k8s.yaml", "--format", "json").output)["findings"]] == [
        "KV103"
    ]


def test_extra_gpu_and_model(project):
    (project / ".kvlint.yaml").write_text(
        textwrap.dedent("""
        gpu: acme-x1
        gpus: [{id: acme-x1, name: ACME X1, memory: 40GiB, compute-capability: "9.0"}]
        models:
          - id: acme/tiny
            config: {model_type: llama, hidden_size: 2048, num_attention_heads: 16, num_key_value_heads: 4,
                     num_hidden_layers: 16, vocab_size: 32000, max_position_embeddings: 8192, intermediate_size: 5632}
        """)
    )
    (project / "deploy" / "tiny.yaml").write_text(
        "kind: ServingSpec\nmodel: acme/tiny\ngpu: acme-x1\nmax_sequences: 8\n"
    )
    r = run("tiny.yaml", "--format", "json")
    doc = json.loads(r.output)
    assert doc["findings"] == [] and doc["deployments"][0]["gpu"] == "acme-x1"
    assert doc["deployments"][0]["plan"]["gpu_memory_bytes"] == 40 * 2**30


def test_kvlint_config_prints_settings_and_origins(project):
    (project / "pyproject.toml").write_text('[tool.kvlint]\nfail-on = "warning"\nignore = ["KV004"]\n')
    r = run("config")
    assert r.exit_code == 0
    assert "fail-on" in r.output and "warning" in r.output and "pyproject.toml" in r.output
    assert "strict" in r.output and "(default)" in r.output


def test_config_that_is_not_utf8_is_an_error_not_a_traceback(project):
    (project / ".kvlint.yaml").write_bytes(b"select: [KV1]\n\xff\xfe\n")
    r = CliRunner().invoke(main, ["llama.yaml"])
    assert (
        r.exit_code == 2
        and "not UTF-8" in r.output
        and r.exception is None
        or isinstance(r.exception, SystemExit)
    )


def test_validated_config_is_cached_and_revalidated_when_it_changes(project, tmp_path):
    import os
    import subprocess
    import sys

    cache = tmp_path / "cache"
    env = {**os.environ, "KVLINT_CACHE_DIR": str(cache)}
    # a Kubernetes manifest: reading it needs no pydantic, so only the configuration could import it
    (project / "deploy" / "idle.yaml").write_text((FIXTURES / "KV201" / "bad-idle-gpus.yaml").read_text())
    (project / ".kvlint.yaml").write_text("fail-on: warning\ngpus: [{id: acme-x1, memory: 40GiB}]\n")
    probe = (
        "import sys; from kvlint.cli import main\n"
        "try: main(['idle.yaml'])\n"
        "except SystemExit as e: print('exit', e.code, 'pydantic' in sys.modules)\n"
    )

    def lint():
        out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
        return out.stdout.strip().splitlines()[-1], out.stderr

    assert lint()[0] == "exit 1 True"  # first run validates with pydantic, then remembers
    assert len(list(cache.iterdir())) == 1
    assert lint()[0] == "exit 1 False"  # unchanged: pydantic is not even imported
    (project / ".kvlint.yaml").write_text("fail-on: warnin\n")
    last, err = lint()
    assert last == "exit 2 True" and ".kvlint.yaml:1" in err  # changed: validated again, and wrong
    env["KVLINT_NO_CACHE"] = "1"
    (project / ".kvlint.yaml").write_text("fail-on: warning\n")
    assert lint()[0] == "exit 1 True" and lint()[0] == "exit 1 True"
