"""Hostile and odd input through the command line: each gives a located finding or a clear
message and the documented exit code — never a traceback, never a silent pass.

(The loader-level tests are in test_load.py; directories, symlink loops, unreadable and missing
paths in test_inputs.py. This file walks the whole list of issue 6 end to end.)
"""

from __future__ import annotations

import json
import os
import tracemalloc

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, cpu_seconds

from kvlint.cli import main

BILLION_LAUGHS = "\n".join(
    ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
)

CASES = {
    # name: (file bytes, expected exit, rule, line, text that must appear in the message)
    "alias bomb": (BILLION_LAUGHS.encode(), 1, "KV001", 1, "alias bomb"),
    "deep nesting": (b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n", 1, "KV001", 1, "nest"),
    "binary": (b"\x7fELF\x02\x01\x01\x00\x00\x00", 1, "KV001", 1, "binary file"),
    "not UTF-8": (b"kind: Deployment\nmetadata: {name: caf\xe9}\n", 1, "KV001", 2, "not UTF-8"),
    "duplicate keys": (b"kind: Deployment\nkind: Service\n", 1, "KV001", 2, "duplicate key 'kind'"),
    "tabs": (b"kind: Deployment\nspec:\n\treplicas: 1\n", 1, "KV001", 3, "YAML syntax error"),
    "conflict markers": (
        b"a: 1\n<<<<<<< HEAD\nb: 2\n=======\nb: 3\n>>>>>>> main\n",
        1,
        "KV001",
        2,
        "merge-conflict",
    ),
    "unterminated flow": (b"args: [--model, x\n", 1, "KV001", 2, "YAML syntax error"),
    "helm template": (b"metadata:\n  name: {{ .Release.Name }}\n", 0, "KV004", 2, "Helm template"),
}


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(main, ["--isolated", *args], input=input)


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_file_gives_a_located_finding(tmp_path, name):
    data, code, rule, line, text = CASES[name]
    target = tmp_path / "input.yaml"
    target.write_bytes(data)
    r = run("--format", "json", str(target))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == code, r.output
    findings = json.loads(r.stdout)["findings"]
    hit = [f for f in findings if f["rule"] == rule]
    assert hit, findings
    assert hit[0]["line"] == line and text in hit[0]["message"], hit[0]


def test_merge_keys_are_applied_not_rejected(tmp_path):
    target = tmp_path / "merge.yaml"
    target.write_text((FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text())
    r = run("--format", "json", str(target))
    base = [f["rule"] for f in json.loads(r.stdout)["findings"]]
    assert base == ["KV102"]
    merged = tmp_path / "merged.yaml"
    merged.write_text(
        "x-defaults: &defaults\n  max_context: 131072\n---\n"
        "kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: L4\n"
        "<<: {max_context: 131072, max_sequences: 4}\n"
    )
    r = run("--format", "json", str(merged))
    assert [f["rule"] for f in json.loads(r.stdout)["findings"]] == ["KV102"]


def test_alias_bomb_is_bounded_in_time_and_memory(tmp_path):
    target = tmp_path / "bomb.yaml"
    target.write_text(BILLION_LAUGHS)  # 10^12 nodes if expanded
    tracemalloc.start()
    start = cpu_seconds()
    r = run(str(target))
    elapsed = cpu_seconds() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert r.exit_code == 1 and "alias bomb" in r.output
    assert elapsed < 5 and peak < 50 * 2**20, (elapsed, peak)


def test_very_large_file_is_skipped_with_a_finding_and_the_cap_is_configurable(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# padding\n" * 900_000 + b"a: 1\n")  # ~9 MB, over the 8 MiB default
    r = run("--format", "concise", str(big))
    assert r.exit_code == 1 and "KV001" in r.output and "over the 8,388,608-byte limit" in r.output
    r = run("--format", "concise", "--max-file-size", "20000000", str(big))
    assert r.exit_code == 0, r.output
    small = tmp_path / "small.yaml"
    small.write_text("a: 1\n" * 100)
    r = run("--format", "concise", "--max-file-size", "100", str(small))
    assert r.exit_code == 1 and "over the 100-byte limit" in r.output
    assert run("--max-file-size", "-5", str(small)).exit_code == 2  # a usage error


def test_empty_files_are_clean(tmp_path):
    for i, text in enumerate(["", "\n", "# only a comment\n", "---\n...\n", "\ufeff"]):
        (tmp_path / f"e{i}.yaml").write_text(text, encoding="utf-8")
    r = run(str(tmp_path))
    assert r.exit_code == 0 and "no problems found" in r.output


def test_no_code_execution_from_yaml_tags(tmp_path):
    marker = tmp_path / "pwned"
    target = tmp_path / "tags.yaml"
    target.write_text(
        f"a: !!python/object/apply:os.system ['touch {marker}']\n"
        f"b: !!python/object/new:subprocess.Popen [['touch', '{marker}']]\n"
        "c: !!python/name:os.system\n"
        "d: !Ref something\n"
    )
    r = run(str(target))
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert r.exit_code == 0 and not marker.exists()


def test_nonexistent_path_is_a_message_and_exit_2(tmp_path):
    r = run(str(tmp_path / "nope.yaml"))
    assert r.exit_code == 2 and "nope.yaml" in r.output


def test_unreadable_file_message_continue_exit_2(tmp_path, monkeypatch):
    locked = tmp_path / "locked.yaml"
    locked.write_text("a: 1\n")
    locked.chmod(0)
    if os.geteuid() == 0:  # root reads mode-000 files: make the read fail as it would for a user
        real_open = os.open

        def refusing_open(file, *args, **kwargs):
            if str(file).endswith("locked.yaml"):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr("os.open", refusing_open)
    (tmp_path / "bad.yaml").write_text((FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text())
    r = run("--format", "concise", str(tmp_path))
    assert r.exit_code == 2 and "locked.yaml: cannot read: Permission denied" in r.output
    assert "KV102" in r.output  # the rest was still linted


def test_fifo_and_devices_are_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    (tmp_path / "bad.yaml").write_text((FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text())
    r = run("--format", "concise", str(tmp_path), "/dev/null")
    assert r.exit_code == 2 and "pipe.yaml: not a regular file" in r.output
    assert "/dev/null: not a regular file" in r.output and "KV102" in r.output


# ---- no silent passes -----------------------------------------------------------------------

UNCHECKABLE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: custom}
spec:
  template:
    spec:
      containers:
        - name: server
          image: myorg/llm-server:1.2
          command: ["python", "serve.py", "--model", "meta-llama/Llama-3.1-8B-Instruct"]
          resources: {limits: {nvidia.com/gpu: 1}}
        - name: client  # no GPU: a benchmark client, not a server
          image: myorg/bench:1
          command: ["python", "bench.py", "--model", "meta-llama/Llama-3.1-8B-Instruct"]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: triton}
spec:
  template:
    spec:
      containers:
        - name: server
          image: nvcr.io/nvidia/tritonserver:24.08-trtllm-python-py3
          command: ["python3", "launch_triton_server.py", "--model_repo=/models"]
          resources: {limits: {nvidia.com/gpu: 2}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: unread}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "acme/secret-model", "--max-model-len=lots", "--max-num-seqs", "8"]
          resources: {limits: {nvidia.com/gpu: one}}
"""


def test_recognised_workloads_that_cannot_be_checked_say_what_was_skipped(tmp_path):
    target = tmp_path / "odd.yaml"
    target.write_text(UNCHECKABLE)
    r = run("--format", "json", str(target))
    found = {(f["rule"], f["line"]): f for f in json.loads(r.stdout)["findings"]}
    assert ("KV004", 10) in found and "custom serving program" in found[("KV004", 10)]["message"]
    assert not any(line == 14 for _, line in found)  # the client container is not a workload
    # located at the Triton launch script the command runs (kvlint.engines.trtllm.launch)
    assert ("KV004", 25) in found and "TensorRT-LLM" in found[("KV004", 25)]["message"]
    assert "cannot read --max-model-len 'lots'" in found[("KV005", 37)]["message"]
    assert "cannot read nvidia.com/gpu 'one'" in found[("KV005", 38)]["message"]
    assert ("KV002", 30) in found and any("skipped: KV101" in d for d in found[("KV002", 30)]["details"])
    assert ("KV003", 37) in found  # acme/secret-model: unknown, and it says so
    assert r.exit_code == 0  # all of these are warnings or infos by default


def test_strict_turns_what_could_not_be_checked_into_errors(tmp_path):
    target = tmp_path / "odd.yaml"
    target.write_text(UNCHECKABLE)
    r = run("--format", "json", "--strict", str(target))
    findings = json.loads(r.stdout)["findings"]
    assert r.exit_code == 1
    assert {f["severity"] for f in findings if f["rule"] in ("KV002", "KV003", "KV004", "KV005")} == {"error"}
    clean = tmp_path / "good.yaml"
    clean.write_text((FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml").read_text())
    assert run("--strict", str(clean)).exit_code == 0  # strict only bites where something was skipped


# ---- --jobs ---------------------------------------------------------------------------------


def test_jobs_gives_byte_identical_output(tmp_path, monkeypatch):
    monkeypatch.chdir(FIXTURES.parent)
    serial = run("--format", "json", "fixtures")
    parallel = run("--format", "json", "--jobs", "2", "fixtures")
    auto = run("--format", "text", "--jobs", "0", "fixtures")
    assert serial.exit_code == parallel.exit_code == 1
    assert serial.stdout == parallel.stdout
    assert auto.stdout == run("--format", "text", "fixtures").stdout


def test_jobs_workers_see_gpus_declared_in_the_config(tmp_path, monkeypatch, force_workers):
    (tmp_path / ".kvlint.yaml").write_text("gpus: [{id: acme-x1, name: ACME X1, memory: 8GiB}]\n")
    spec = "kind: ServingSpec\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: acme-x1\nmax_context: 4096\n"
    for i in range(40):
        (tmp_path / f"d{i:02d}.yaml").write_text(spec)
    monkeypatch.chdir(tmp_path)
    outs = [CliRunner().invoke(main, ["--format", "concise", "--jobs", j, "."]) for j in ("1", "2")]
    assert outs[0].stdout == outs[1].stdout
    assert outs[0].stdout.count("KV101") == 40 and "KV002" not in outs[0].stdout  # 16 GB of weights on 8 GiB


def test_no_network_and_no_subprocess_while_linting(monkeypatch):
    """Linting reads files and the shipped catalogs only: opening a socket or starting a process
    anywhere in load -> report fails this test."""
    import socket
    import subprocess

    from conftest import SHARED

    targets = [str(FIXTURES)]
    corpus = SHARED / "corpus" / "manifests"
    if corpus.is_dir():  # the fixtures alone when ../shared is not beside the checkout
        targets.append(str(corpus))
    args = ["--isolated", "--format", "json", *targets]
    unguarded = CliRunner().invoke(main, args)

    def refuse(*args, **kwargs):
        raise AssertionError(f"kvlint tried to reach out: {args[:1]}")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "system", refuse)
    r = CliRunner().invoke(main, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 1 and r.stdout == unguarded.stdout  # nothing was lost to the refusals
    deployments = json.loads(r.stdout)["deployments"]
    fixture_files = len(list(FIXTURES.rglob("*.yaml")))
    assert len(deployments) > (fixture_files // 2 + (100 if corpus.is_dir() else 0))
