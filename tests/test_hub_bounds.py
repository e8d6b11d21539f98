"""Security review 3, class B and S10: what `--hub` / `kvlint models pull` reads from a server is
bounded by kvlint, not by the size the server sends, and no credential in HF_ENDPOINT is shown or
stored. A local server on 127.0.0.1 only (test_hub.py's fake Hub), stopped with the module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("huggingface_hub", reason="kvlint-serving[hub] (huggingface_hub) is not installed")

from test_hub import DENSE_ST, LLAMA, REPOS, Hub  # noqa: E402

from kvlint.catalog.hub import MAX_JSON_BYTES, HubError, pull, without_userinfo  # noqa: E402

HUGE = 300 * 1024 * 1024  # the review's 300 MB config.json, generated as it is sent
SENT: dict[str, int] = {}  # path -> bytes the server managed to write before the client hung up


class HostileHub(Hub):
    """The fake Hub, plus repositories whose server misbehaves."""

    def do_GET(self):  # noqa: N802 - http.server's name
        repo = "/".join(self.path.strip("/").split("/")[:2])
        filename = self.path.split("?")[0].rsplit("/", 1)[-1]
        if repo == "evil/huge-config" and filename == "config.json":
            return self._stream(200, HUGE)
        if repo == "evil/ignores-range" and filename == "model.safetensors":
            return self._stream(200, HUGE)  # a shard sent whole whatever Range asked
        if repo == "evil/long-range" and filename == "model.safetensors" and self.headers.get("Range"):
            return self._stream(206, HUGE)  # "partial" content far longer than asked
        return super().do_GET()

    def _stream(self, status: int, size: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        chunk, sent = b" " * (1 << 20), 0
        try:
            while sent < size:
                self.wfile.write(chunk)
                sent += len(chunk)
        except OSError:  # the client stopped reading and closed the connection
            pass
        SENT[self.path] = sent


for name in ("evil/huge-config", "evil/ignores-range", "evil/long-range"):
    REPOS[name] = {"config.json": json.dumps(LLAMA).encode(), "model.safetensors": DENSE_ST}


@pytest.fixture(scope="module")
def hostile_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def env(hostile_url, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", hostile_url)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("KVLINT_MODELS_DIR", str(tmp_path / "models"))
    return tmp_path / "models"


def _peak_mb_of(fn) -> float:
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak / 1e6


def test_s08_a_huge_body_is_not_read_past_the_cap(env):
    """S8: a 300 MB config.json peaked at 652-667 MB RSS before the 16 MB check."""

    def attempt():
        with pytest.raises(HubError, match="larger than"):
            pull("evil/huge-config")

    assert _peak_mb_of(attempt) < 3 * MAX_JSON_BYTES / 1e6  # the cap and a chunk, not the body
    assert not env.exists() or not list(env.iterdir())  # nothing cached


@pytest.mark.parametrize("repo", ["evil/ignores-range", "evil/long-range"])
def test_s08_a_range_answer_that_is_not_the_range_is_refused(env, repo):
    """S8: a shard that ignores Range (200 with 300 MB) peaked at 975 MB; a 206 longer than asked
    is refused as well, after at most the bytes asked for."""

    def attempt():
        with pytest.raises(HubError, match="not 206|more than the 8 bytes asked"):
            pull(repo)

    assert _peak_mb_of(attempt) < 16
    assert not env.exists() or not list(env.iterdir())


def test_s10_endpoint_credentials_are_never_shown_or_stored(hostile_url, tmp_path):
    """S10: HF_ENDPOINT=http://mirroruser:MIRROR_PASSWORD_42@host reached the JSON report's
    `source`, the SARIF message and fix, and the --hub cache file."""
    secret = "MIRROR_PASSWORD_42"
    authed = hostile_url.replace("http://", f"http://mirroruser:{secret}@")
    assert without_userinfo(authed) == hostile_url
    spec = tmp_path / "deploy.yaml"
    spec.write_text("kind: ServingSpec\nname: m\nmodel: acme/dense-1b\ngpu: L4\nmax_context: 4096\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KVLINT_", "XDG_"))}
    base.update(HF_HOME=str(tmp_path / "hf"))
    outputs = []
    for i, endpoint in enumerate((authed, f"http://mirroruser:{secret}@127.0.0.1:9")):  # reachable, refused
        for fmt in ("json", "sarif", "text"):
            done = subprocess.run(
                [sys.executable, "-m", "kvlint", "--isolated", "--hub", "-f", fmt, "deploy.yaml"],
                cwd=tmp_path,
                env={**base, "HF_ENDPOINT": endpoint, "XDG_CACHE_HOME": str(tmp_path / f"cache{i}")},
                capture_output=True,
                text=True,
                timeout=120,
            )
            outputs.append(done.stdout + done.stderr)
    assert "could not reach http://127.0.0.1:9" in outputs[-1]  # the failure is still explained
    assert all(secret not in out and "mirroruser" not in out for out in outputs), outputs
    cached = list(Path(tmp_path / "cache0").rglob("*.json"))
    assert cached and all(secret not in p.read_text() for p in cached)
    assert hostile_url in cached[0].read_text()  # the source names the mirror, without the userinfo
