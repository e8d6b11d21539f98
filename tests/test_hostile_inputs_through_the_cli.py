"""Hostile inputs through the command line end in findings, never a crash or a silent pass:
config.json values of the wrong type or size (a located KV003), a quantization the plan does not
model (refused), huge pod sizes, an unset variable or annotation code that would start a runner
command line, a hostile model name in Markdown, a configuration that excludes every file. Rebuilt
from the first security review's F5, F10, F16, F17, F19, F26 and F28 (../shared/reviews/security-review.md).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from kvlint.cli import main

BASE_CONFIG = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "intermediate_size": 14336,
    "torch_dtype": "bfloat16",
}


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, ["--isolated", *args], env=env)


def no_crash(r) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "internal error" not in r.stdout and "Traceback" not in r.output, r.output


# ---- F26: config.json values of the wrong type or size ----------------------------------------------

CONFIG_JSON = {
    "head_dim": ('"head_dim": {}', "config head_dim {} is not a number"),
    "kv heads list": ('"num_key_value_heads": [8]', "config num_key_value_heads [8] is not a number"),
    "kv_lora_rank list": ('"kv_lora_rank": [512]', "config kv_lora_rank [512] is not a number"),
    "layers Infinity": ('"num_hidden_layers": Infinity', "num_hidden_layers inf is not a finite number"),
    "positions Infinity": (
        '"max_position_embeddings": Infinity',
        "max_position_embeddings inf is not a finite",
    ),
    "hidden 1e300": ('"hidden_size": 1e300', "hidden_size 1e+300 is out of range"),
    "rope factor 1e308": ('"rope_scaling": {"rope_type": "linear", "factor": 1e308}', "rope_scaling.factor"),
    "100,000-deep": (None, "JSON nested too deeply to read"),
}


@pytest.mark.parametrize("case", list(CONFIG_JSON))
def test_f26_config_json_of_the_wrong_type_is_a_located_kv003(tmp_path, case):
    extra, message = CONFIG_JSON[case]
    (tmp_path / "m").mkdir()
    text = (
        "[" * 100_000 + "]" * 100_000 if extra is None else json.dumps(BASE_CONFIG)[:-1] + ", " + extra + "}"
    )
    (tmp_path / "m" / "config.json").write_text(text)
    (tmp_path / "d.yaml").write_text("kind: ServingSpec\nmodel: ./m\ngpu: L4\nmax_context: 4096\n")
    r = run("--format", "json", str(tmp_path / "d.yaml"))
    no_crash(r)
    assert r.exit_code == 0
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "KV003"]
    assert (f["line"], f["column"]) == (2, 8) and message in f["message"], f["message"]


# ---- F28: kvlint plan --quantization --------------------------------------------------------------------


def test_f28_plan_refuses_a_quantization_it_does_not_model():
    r = CliRunner().invoke(
        main, ["plan", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "L4", "--quantization", "evil"]
    )
    assert r.exit_code == 2 and "'evil' is not a quantization method kvlint models" in r.output
    ok = CliRunner().invoke(
        main, ["plan", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "L4", "--quantization", "FP8"]
    )
    assert ok.exit_code == 0 and "fp8 weights quantized at load" in ok.output


# ---- F5: huge sizes in a pod ----------------------------------------------------------------------------

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      volumes: [{{name: shm, emptyDir: {{medium: Memory, sizeLimit: {shm}}}}}]
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command: {command}
          args: ["--tensor-parallel-size=2"]
          volumeMounts: [{{name: shm, mountPath: /dev/shm}}]
          resources: {{limits: {{nvidia.com/gpu: "2", memory: {memory}}}}}
"""


@pytest.mark.parametrize(
    "shm, memory", [("1e999999999Gi", "16Gi"), ("1Gi", "1e999999999Gi"), ("1e400Gi", "1e400")]
)
def test_f5_huge_pod_sizes_do_not_crash_the_run(tmp_path, shm, memory):
    command = json.dumps(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"])
    (tmp_path / "pod.yaml").write_text(POD.format(shm=shm, memory=memory, command=command))
    bad = FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml"
    r = run("--format", "sarif", str(bad), str(tmp_path / "pod.yaml"))
    no_crash(r)
    rules = {x["ruleId"] for x in json.loads(r.stdout)["runs"][0]["results"]}
    assert "KV102" in rules  # the other file's report survives


# ---- F16: the other raw-text messages the review named ------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "concise", "github"])
def test_f16_unset_variable_and_unknown_annotation_code_cannot_start_a_command_line(tmp_path, fmt):
    command = json.dumps(["vllm", "serve", "$(UNSET)\n::error file=README.md,line=1::INJECTED-unset\n"])
    text = POD.format(shm="1Gi", memory="16Gi", command=command).replace(
        "metadata: {name: m}",
        'metadata: {name: m, annotations: {kvlint.io/ignore: "KV1\\n::warning::IGN=why"}}',
    )
    (tmp_path / "p.yaml").write_text(text)
    r = run("--format", fmt, str(tmp_path / "p.yaml"), env={"GITHUB_ACTIONS": "true"})
    no_crash(r)
    lines = (r.stdout + r.stderr).splitlines()
    assert "INJECTED-unset" in r.stdout  # reported, escaped
    commands = [line for line in lines if line.startswith("::")]
    # kvlint's own commands only: each annotation names the linted file, none the injected README.md or
    # IGN; the infos summary is kvlint's one run-level notice (no file), its text escaped
    summaries = [line for line in commands if line.startswith("::notice title=kvlint infos::")]
    assert len(summaries) <= 1 and all("%0A::" not in line for line in summaries)
    annotations = [line for line in commands if line not in summaries]
    assert all(line.split(",")[0].endswith("p.yaml") for line in annotations), commands


# ---- F10 / F17: hostile model names in Markdown -----------------------------------------------------------


@pytest.mark.parametrize(
    "model", ["acme/x\ud800", "acme/</td><img src=x onerror=alert(1)>`[phish](https://evil.example)"]
)
def test_f10_f17_a_hostile_model_name_in_markdown(tmp_path, model):
    spec = f"kind: ServingSpec\nmodel: {json.dumps(model)}\ngpu: L4\nmax_context: 4096\n"
    (tmp_path / "d.yaml").write_text(spec, encoding="utf-8", errors="surrogatepass")
    r = run("--format", "markdown", str(tmp_path / "d.yaml"))
    no_crash(r)
    out = r.stdout
    assert "\ud800" not in out and "<img" not in out and "</td>" not in out and "[phish](" not in out
    assert "acme/" in out and ("&lt;img" in out or "\ufffd" in out)


# ---- F19: exclude everything ----------------------------------------------------------------------------


def test_f19_a_config_that_excludes_everything_does_not_claim_no_problems(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "a.yaml").write_text(
        (FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text()
    )
    (tmp_path / ".kvlint.yaml").write_text('exclude: ["*"]\n')
    r = CliRunner().invoke(main, ["deploy"])
    assert r.exit_code == 2 and "no problems found" not in r.stdout
    assert "every manifest under it is skipped" in r.stderr
    r = CliRunner().invoke(main, ["deploy/a.yaml"])
    assert "no problems found" not in r.stdout and "skipped: 1 by exclude patterns" in r.stdout
