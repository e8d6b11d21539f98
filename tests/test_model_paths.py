"""F7, F31: `model: ./dir/x.json` reads exactly the named file (or says it cannot), only regular
files are opened, reads are capped, and `~` is not expanded into the runner's home."""

from __future__ import annotations

import json
import os
import threading

import pytest
from click.testing import CliRunner

from kvlint.cli import main

L70 = {
    "model_type": "llama",
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "num_hidden_layers": 80,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "intermediate_size": 28672,
    "torch_dtype": "bfloat16",
}
TINY = {**L70, "hidden_size": 512, "num_attention_heads": 8, "num_hidden_layers": 2, "vocab_size": 1000}
SPEC = "kind: ServingSpec\nmodel: {model}\ngpu: L4\nmax_context: 4096\nmax_sequences: 1\n"


def run(*args: str):
    return CliRunner().invoke(main, ["--isolated", *args], catch_exceptions=False)


@pytest.fixture
def work(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "llama70b.json").write_text(json.dumps(L70))
    (tmp_path / "d.yaml").write_text(SPEC.format(model="./models/llama70b.json"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_f7_the_named_file_is_read_not_config_json_beside_it(work):
    (work / "models" / "config.json").write_text(json.dumps(TINY))
    r = run("--format", "json", "d.yaml")
    assert r.exit_code == 1  # a 70B model does not fit one L4
    doc = json.loads(r.stdout)
    assert "llama70b.json" in json.dumps(doc["deployments"]) and "config.json" not in json.dumps(
        doc["deployments"]
    )
    assert any(f["rule"] == "KV101" or f["rule"].startswith("KV1") for f in doc["findings"])


def test_f7_without_config_json_the_warning_names_no_wrong_file(work):
    r = run("--format", "json", "d.yaml")
    assert "config.json" not in r.stdout and r.exit_code == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_f7_fifo_or_dev_zero_as_the_model_file_is_refused(work):
    os.symlink("/dev/zero", work / "models" / "zero.json")
    os.mkfifo(work / "models" / "pipe.json")
    os.mkfifo(work / "models" / "config.json")  # beside a regular x.json: never opened now
    (work / "z.yaml").write_text(SPEC.format(model="./models/zero.json"))
    (work / "p.yaml").write_text(SPEC.format(model="./models/pipe.json"))
    out: dict = {}
    worker = threading.Thread(
        target=lambda: out.setdefault("r", run("z.yaml", "p.yaml", "d.yaml")), daemon=True
    )
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "kvlint hung on a FIFO or device model file"
    text = out["r"].stdout
    assert "not a regular file" in text and "KV003" in text


def test_f7_reads_are_capped_by_bytes_read(work):
    (work / "models" / "big.json").write_text('{"a": "' + "x" * (5 * 1024 * 1024) + '"}')
    (work / "b.yaml").write_text(SPEC.format(model="./models/big.json"))
    r = run("b.yaml")
    assert "larger than" in r.stdout and "KV003" in r.stdout


def test_f31_tilde_is_not_expanded_into_the_runner_home(work, monkeypatch):
    home = work / "home"
    (home / ".docker").mkdir(parents=True)
    (home / ".docker" / "config.json").write_text('{"auths": {}}')
    monkeypatch.setenv("HOME", str(home))
    (work / "t.yaml").write_text(SPEC.format(model="~/.docker"))
    (work / "u.yaml").write_text(SPEC.format(model="~/.nothing-here"))
    first, second = run("t.yaml").stdout, run("u.yaml").stdout
    assert "num_hidden_layers" not in first  # the file was not read

    def head(text: str, name: str) -> str:
        return text.splitlines()[0].replace(name, "P").split(":", 1)[1]

    assert head(first, "~/.docker") == head(second, "~/.nothing-here")  # no oracle: both read the same
