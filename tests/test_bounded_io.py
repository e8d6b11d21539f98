"""Bounded I/O (issue 10, security review F4/F7 class): every file kvlint reads from the project or
the environment — a linted manifest, `.kvlint.yaml`, `pyproject.toml`, `--config` — is opened only
if it is a regular file and read capped by bytes read. A FIFO never hangs the run and a link to
/dev/zero never exhausts memory: each is a clear message and exit 2.

Each case runs the real command in a subprocess with a timeout, so a regression fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from conftest import FIXTURES

from kvlint.fileio import NotRegular, TooLarge, read_regular

KV102 = (FIXTURES / "KV102" / "bad-llama-8b-l4-128k.yaml").read_text()


def kvlint(cwd, *args: str):
    env = {**os.environ, "KVLINT_NO_CACHE": "1"}
    probe = "import sys\nfrom kvlint.cli import main\nmain(sys.argv[1:])\n"
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", probe, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    return out, time.monotonic() - start


def _special(path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
@pytest.mark.parametrize("name", [".kvlint.yaml", ".kvlint.yml", "pyproject.toml"])
def test_a_discovered_config_that_is_not_a_regular_file_is_an_error(tmp_path, name, kind):
    (tmp_path / "deploy.yaml").write_text(KV102)
    _special(tmp_path / name, kind)
    out, seconds = kvlint(tmp_path, "deploy.yaml")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert f"kvlint: {name}: not a regular file" in out.stderr  # relative, as discovered
    assert seconds < 30
    out, _ = kvlint(tmp_path, "config")
    assert out.returncode == 2 and "not a regular file" in out.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_an_explicit_config_that_is_not_a_regular_file_is_an_error(tmp_path, kind):
    (tmp_path / "deploy.yaml").write_text(KV102)
    _special(tmp_path / "cfg.yaml", kind)
    out, _ = kvlint(tmp_path, "--config", "cfg.yaml", "deploy.yaml")
    assert out.returncode == 2 and "cfg.yaml: not a regular file" in out.stderr, out.stderr


def test_an_oversized_config_is_an_error_not_read_whole(tmp_path):
    (tmp_path / "deploy.yaml").write_text(KV102)
    (tmp_path / ".kvlint.yaml").write_bytes(b"# pad\n" * 400_000)  # 2.4 MB
    out, _ = kvlint(tmp_path, "deploy.yaml")
    assert out.returncode == 2 and ".kvlint.yaml: larger than 1,048,576 bytes" in out.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_linted_file_that_is_not_a_regular_file_is_refused_and_the_rest_linted(tmp_path, kind):
    (tmp_path / "deploy.yaml").write_text(KV102)
    _special(tmp_path / "odd.yaml", kind)
    out, seconds = kvlint(tmp_path, "--format", "concise", "odd.yaml", "deploy.yaml")
    assert out.returncode == 2 and "kvlint: odd.yaml: not a regular file" in out.stderr, out.stderr
    assert "KV102" in out.stdout and seconds < 30


def test_read_regular_refuses_without_blocking_and_caps_by_bytes_read(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegular):
        read_regular(str(fifo), 100)  # O_NONBLOCK: no writer, no hang
    with pytest.raises(NotRegular):
        read_regular("/dev/zero", 100)
    with pytest.raises(NotRegular):
        read_regular(str(tmp_path), 100)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(TooLarge) as info:
        read_regular(str(big), 4096)
    assert info.value.size == 5000
    assert read_regular(str(big), 5000) == b"x" * 5000


def test_an_oversized_manifest_names_its_real_size(tmp_path):
    (tmp_path / "big.yaml").write_bytes(b"# pad\n" * 2000)
    out, _ = kvlint(tmp_path, "--format", "concise", "--max-file-size", "1000", "big.yaml")
    assert out.returncode == 1 and "file is 12,000 bytes, over the 1,000-byte limit" in out.stdout
