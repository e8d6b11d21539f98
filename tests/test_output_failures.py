"""Exit 2, one clear line and no traceback when the report cannot be delivered (security review F26).

Exit 1 means "findings"; a clean file whose report could not be written must not look like one,
and a traceback is never the answer. Each case is the review's reproducer, run as a real process
(closed, full and broken standard output cannot be faked in-process).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import FIXTURES

CLEAN = str(FIXTURES / "KV102" / "good-llama-8b-l4-16k.yaml")
BAD = str(FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml")
PROBE = "import sys\nfrom kvlint.entry import main\nsys.argv[0] = 'kvlint'\nmain()\n"


def kvlint(*args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "KVLINT_NO_CACHE": "1", **(env or {})}
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=full_env,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        **kwargs,
    )


def failed_cleanly(out: subprocess.CompletedProcess, message: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr and message in out.stderr, out.stderr


def test_stdout_closed():
    out = kvlint("--isolated", CLEAN, stdout=None, preexec_fn=lambda: os.close(1))
    failed_cleanly(out, "kvlint: cannot write the report: standard output is closed")


def test_stdout_full():
    with open("/dev/full", "w") as full:
        out = kvlint("--isolated", CLEAN, stdout=full)
    failed_cleanly(out, "kvlint: cannot write the report to standard output: No space left on device")


def test_stdout_pipe_closed_by_the_reader():
    proc = subprocess.Popen(
        [sys.executable, "-c", PROBE, "--isolated", "--format", "json", str(FIXTURES)],
        env={**os.environ, "KVLINT_NO_CACHE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader goes away before the report (~470 KB, more than a pipe holds)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "Traceback" not in err, err
    assert "kvlint: cannot write the report: the reader closed the pipe (broken pipe)" in err


@pytest.mark.parametrize(
    "target, message",
    [
        (
            "/nonexistent/dir/x.txt",
            "kvlint: --output /nonexistent/dir/x.txt: directory /nonexistent/dir does not exist",
        ),
        ("/proc/version", "kvlint: --output /proc/version: "),  # not writable, or the write fails (root)
    ],
)
def test_unwritable_output(target, message):
    if not os.path.exists("/proc/version") and target == "/proc/version":
        pytest.skip("no /proc on this system")
    failed_cleanly(kvlint("--isolated", "-o", target, BAD), message)


def test_output_directory_is_checked_before_linting(tmp_path):
    """Nothing is linted (no read of the manifest) when the report could not be written anyway."""
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # would be an error of its own if it were looked at
    out = kvlint("--isolated", "-o", str(tmp_path / "missing" / "r.txt"), str(fifo))
    failed_cleanly(out, "directory")
    assert "pipe.yaml" not in out.stderr


def test_an_output_encoding_that_cannot_carry_the_report():
    out = kvlint("--isolated", "--format", "markdown", CLEAN, env={"PYTHONIOENCODING": "ascii"})
    failed_cleanly(out, "the output encoding 'ascii' cannot represent")
    assert "PYTHONIOENCODING=utf-8" in out.stderr


@pytest.mark.parametrize("command", [["rules"], ["config", "--isolated"], ["explain", "KV102"]])
def test_other_commands_fail_the_same_way(command):
    with open("/dev/full", "w") as full:
        failed_cleanly(kvlint(*command, stdout=full), "No space left on device")
    failed_cleanly(kvlint(*command, stdout=None, preexec_fn=lambda: os.close(1)), "standard output is closed")


def test_a_pyproject_whose_tool_is_not_a_table(tmp_path):
    """`# [tool.kvlint]` in a comment makes kvlint read the file; `tool = 1` was an AttributeError."""
    (tmp_path / "pyproject.toml").write_text("# [tool.kvlint]\ntool = 1\n")
    out = kvlint(CLEAN, cwd=tmp_path)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    (tmp_path / "pyproject.toml").write_text("# [tool.kvlint]\ntool = {kvlint = 1}\n")
    failed_cleanly(
        kvlint(CLEAN, cwd=tmp_path), "pyproject.toml: the configuration must be a table of settings"
    )


def test_a_report_that_is_written_still_exits_with_the_verdict(tmp_path):
    report = tmp_path / "r.txt"
    out = kvlint("--isolated", "-o", str(report), BAD)
    assert out.returncode == 1 and "KV102" in report.read_text()
