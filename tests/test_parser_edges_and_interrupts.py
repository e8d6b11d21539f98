"""Parser edges end in a located finding, never an internal error: a damaged local checkpoint, shell
arithmetic on a 100,000-digit value, an unreadable --cuda-graph-sizes, JSON nested 100,000 deep in
an engine option or a pulled model entry each give a located KV003 / KV005 and the rest of the file
is still checked; Ctrl-C exits 130 with one line. Rebuilt from security review 3's S18 and S21."""

from __future__ import annotations

import json
import os
import struct

import pytest
from test_hub import LLAMA

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

SPEC = "kind: ServingSpec\nname: m\nmodel: ./m\ngpu: L4\nmax_context: 4096\nmax_sequences: 4\n"
DEEP = b"[" * 100_000 + b"]" * 100_000
HEADER = b'{"a": ' + DEEP + b"}"
GPTQ = dict(LLAMA, quantization_config={"quant_method": "gptq", "bits": 1e308, "group_size": 128})

MODEL_DIRS = {
    "index is a list": (LLAMA, {"model.safetensors.index.json": b"[1,2]"}, "not a JSON object"),
    "index metadata is a list": (LLAMA, {"model.safetensors.index.json": b'{"metadata": [1]}'}, "metadata"),
    "index 100k deep": (LLAMA, {"model.safetensors.index.json": b'{"weight_map": ' + DEEP + b"}"}, "deep"),
    "header 100k deep": (
        LLAMA,
        {"model.safetensors": struct.pack("<Q", len(HEADER)) + HEADER},
        "deep",
    ),
    "gptq bits 1e308": (GPTQ, {}, "bits"),
}


def lint(tmp_path, text: str):
    path = tmp_path / "deploy.yaml"
    path.write_text(text)
    result = read_and_lint(str(path), Settings(), "deploy.yaml")
    assert not isinstance(result, str), result
    assert not result.crashed and "internal error" not in " ".join(f.message for f in result.findings)
    return result


@pytest.mark.parametrize("case", MODEL_DIRS, ids=list(MODEL_DIRS))
def test_s18_a_damaged_local_checkpoint_is_a_located_kv003(tmp_path, case):
    config, files, said = MODEL_DIRS[case]
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    for name, body in files.items():
        (tmp_path / "m" / name).write_bytes(body)
    result = lint(tmp_path, SPEC)
    (finding,) = [f for f in result.findings if f.rule == "KV003"]
    assert finding.where.line == 3 and said in finding.message, finding.message


def pod(args: str, env: str = "[]", command: str = "[sh, -c]") -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  containers:\n"
        f"    - name: c\n      image: vllm/vllm-openai:v0.10.1\n      command: {command}\n"
        f"      args: {args}\n      env: {env}\n      resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )


def test_s18_shell_arithmetic_on_a_100000_digit_value_is_left_unread(tmp_path):
    digits = "9" * 100_000
    env = f'[{{name: A, value: "{digits}"}}, {{name: B, value: "{digits}"}}]'
    text = pod('["vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len $((A*B))"]', env)
    result = lint(tmp_path, text)
    (finding,) = [f for f in result.findings if f.rule == "KV005"]
    assert finding.where.line == 10 and "$((A*B))" in finding.message


@pytest.mark.parametrize("value", ["9" * 5000, "\u00b2"], ids=["5000-digits", "superscript-two"])
def test_s18_cuda_graph_sizes_int_cannot_read_is_a_kv005(tmp_path, value):
    text = pod(f'["--model", "meta-llama/Llama-3.1-8B-Instruct", "--cuda-graph-sizes={value}"]', command="[]")
    result = lint(tmp_path, text)
    (finding,) = [f for f in result.findings if f.rule == "KV005"]
    assert finding.where.line == 10 and "not a CUDA-graph batch size" in finding.message


def _group_cpu(pgid: int) -> float:
    """CPU seconds (user + system) spent so far by the processes of group `pgid` (Linux /proc); where
    there is no /proc, 2.5 s of waiting stands in for it."""
    import os
    import time

    if not os.path.isdir("/proc/self"):
        time.sleep(2.5)
        return float("inf")
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state, ppid, pgrp, ..., utime (11), stime (12)
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("extra", [[], ["-j", "2"], ["--fix"]], ids=["one-process", "jobs-2", "fix"])
def test_s21_ctrl_c_exits_130_with_one_line(tmp_path, extra):
    """S21: Ctrl-C on a 1,500-file run printed a KeyboardInterrupt traceback (one process) or click's
    "Aborted!" with exit 1, the findings code (-j 2, --fix)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import FIXTURES

    bad = (FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_bytes()
    for i in range(3000):
        (tmp_path / f"f{i:04}.yaml").write_bytes(bad)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kvlint", "--isolated", "--no-color", *extra, "."],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # the signal goes to its process group, as a terminal's Ctrl-C does
    )
    # Interrupt once the run is linting, not while Python starts (a loaded machine can take seconds to
    # start): wait for the process group to have spent a second of CPU, or 2.5 s where /proc is absent.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and _group_cpu(proc.pid) < 1.0:
        time.sleep(0.1)
    assert proc.poll() is None, "the run ended before the interrupt"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    text = err.decode()
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "Aborted" not in text
    assert text.strip().splitlines()[-1] == "kvlint: interrupted" and text.count("interrupted") == 1, text


def test_ctrl_c_as_a_file_opens_is_the_interrupt_not_a_read_error(tmp_path, monkeypatch):
    """Ctrl-C that lands as os.fdopen returns drops the new file object, which closes the descriptor;
    open_regular closed it a second time, and that close's "Bad file descriptor" replaced the
    interrupt: the run reported the file unreadable, went on and exited 2 (seen once in the S21 test
    above on a user's clone). The interrupt must come through, and the descriptor be closed once."""
    import errno

    from kvlint import fileio

    path = tmp_path / "deploy.yaml"
    path.write_text("a: 1\n")
    real, opened = os.fdopen, []

    def interrupted_as_it_returns(fd, *args, **kwargs):
        fh = real(fd, *args, **kwargs)
        opened.append(fd)
        del fh  # as the interpreter drops the value the call returned when the handler raises
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", interrupted_as_it_returns)
    with pytest.raises(KeyboardInterrupt):
        fileio.read_regular(str(path), 1024)
    monkeypatch.undo()
    with pytest.raises(OSError) as closed:
        os.fstat(opened[0])
    assert closed.value.errno == errno.EBADF
    assert fileio.read_regular(str(path), 1024) == b"a: 1\n"


@pytest.mark.parametrize(
    "flag",
    [
        "--hf-overrides",
        "--kv-transfer-config",
        "--speculative-config",
        "--eplb-config",
        "--compilation-config",
    ],
)
def test_s18_a_json_engine_option_nested_100k_deep_is_located(tmp_path, flag):
    """The class of S18 beyond the review's seven: every JSON an engine option carries was read with
    json.loads catching ValueError only; 100,000 `[` raised RecursionError (internal error)."""
    deep = "[" * 100_000 + "]" * 100_000
    value = json.dumps('{"a": ' + deep + "}")
    text = pod(f'["--model", "meta-llama/Llama-3.1-8B-Instruct", "{flag}", {value}]', command="[]")
    result = lint(tmp_path, text)
    # said at the option (KV005 cannot read it; --speculative-config: KV004, the draft is not priced)
    assert any(f.rule in ("KV004", "KV005") and f.where.line == 10 for f in result.findings), result.findings


def test_s18_a_pulled_entry_nested_100k_deep_is_a_located_kv003(tmp_path, monkeypatch):
    from kvlint.catalog import pulled

    monkeypatch.setenv("KVLINT_MODELS_DIR", str(tmp_path / "models"))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "acme--deep-7b.json").write_text(
        '{"config": ' + "[" * 100_000 + "]" * 100_000 + "}"
    )
    pulled._index.cache_clear()
    try:
        result = lint(tmp_path, SPEC.replace("./m", "acme/deep-7b"))
    finally:
        pulled._index.cache_clear()
    (finding,) = [f for f in result.findings if f.rule == "KV003"]
    assert finding.where.line == 3 and "nested too deeply" in finding.message
