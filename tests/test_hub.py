"""`kvlint models pull` against a local server speaking the Hub's file endpoints (127.0.0.1 only).

The server answers GET {endpoint}/{repo}/resolve/{revision}/{file} with Range support, 404 with the
Hub's X-Error-Code for a missing repository or file, and 401 for a gated repository without a token.
Repositories: dense (one model.safetensors), sharded (index + two shards whose headers the test writes,
packed int4 weights with scales and zero points), Mistral-format params.json, gated.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("huggingface_hub", reason="kvlint-serving[hub] (huggingface_hub) is not installed")

from kvlint.catalog import models, pulled  # noqa: E402
from kvlint.catalog.hub import HubError, pull  # noqa: E402

LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
    "unrelated_key": [1, 2, 3],
}


def safetensors_file(tensors: dict[str, tuple[str, list[int]]]) -> tuple[bytes, int]:
    """A real safetensors file (header + zero data) and its data size."""
    sizes = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "U8": 1, "F8_E4M3": 1}
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, (dtype, shape) in tensors.items():
        count = 1
        for d in shape:
            count *= d
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [offset, offset + count * sizes[dtype]],
        }
        offset += count * sizes[dtype]
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + bytes(offset), offset


DENSE_ST, DENSE_BYTES = safetensors_file(
    {
        "model.embed_tokens.weight": ("BF16", [1000, 512]),
        "model.layers.0.mlp.up_proj.weight": ("BF16", [1024, 512]),
    }
)
# int4 packed 8 per int32 (AWQ/GPTQ layout), bf16 scales per 128, packed zero points
SHARD1, SHARD1_BYTES = safetensors_file(
    {
        "model.layers.0.self_attn.q_proj.qweight": ("I32", [512, 64]),
        "model.layers.0.self_attn.q_proj.scales": ("BF16", [4, 512]),
        "model.layers.0.self_attn.q_proj.qzeros": ("I32", [4, 64]),
    }
)
SHARD2, SHARD2_BYTES = safetensors_file(
    {"lm_head.weight": ("BF16", [1000, 512]), "model.norm.weight": ("F32", [512])}
)
INDEX = {
    "metadata": {"total_size": 1},  # deliberately wrong: the headers are the exact figure
    "weight_map": {
        "model.layers.0.self_attn.q_proj.qweight": "model-00001-of-00002.safetensors",
        "model.layers.0.self_attn.q_proj.scales": "model-00001-of-00002.safetensors",
        "model.layers.0.self_attn.q_proj.qzeros": "model-00001-of-00002.safetensors",
        "lm_head.weight": "model-00002-of-00002.safetensors",
        "model.norm.weight": "model-00002-of-00002.safetensors",
    },
}
MISTRAL_PARAMS = {
    "dim": 1024,
    "n_layers": 6,
    "head_dim": 128,
    "hidden_dim": 2048,
    "n_heads": 8,
    "n_kv_heads": 4,
    "vocab_size": 32768,
    "norm_eps": 1e-5,
    "rope_theta": 1e6,
}
AWQ = dict(
    LLAMA, quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
)
REPOS: dict[str, dict[str, bytes]] = {
    "acme/dense-1b": {"config.json": json.dumps(LLAMA).encode(), "model.safetensors": DENSE_ST},
    "acme/sharded-awq": {
        "config.json": json.dumps(AWQ).encode(),
        "model.safetensors.index.json": json.dumps(INDEX).encode(),
        "model-00001-of-00002.safetensors": SHARD1,
        "model-00002-of-00002.safetensors": SHARD2,
    },
    "mistralai/params-only": {"params.json": json.dumps(MISTRAL_PARAMS).encode()},
    "acme/gated-7b": {"config.json": json.dumps(LLAMA).encode()},
    "nvidia/modelopt-fp8": {
        "config.json": json.dumps(LLAMA).encode(),
        "hf_quant_config.json": json.dumps(
            {
                "producer": {"name": "modelopt"},
                "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"},
            }
        ).encode(),
    },
}
GATED = {"acme/gated-7b"}
TOKEN = "hf_test_token_for_the_local_server"


class Hub(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):  # noqa: N802 - http.server's name
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return self._send(404, b"", {"X-Error-Code": "RepoNotFound"})
        repo, filename = "/".join(parts[:2]), "/".join(parts[4:])
        if repo not in REPOS:
            return self._send(404, b"Repository not found", {"X-Error-Code": "RepoNotFound"})
        if repo in GATED and self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._send(401, b"Access to model is restricted", {"X-Error-Code": "GatedRepo"})
        body = REPOS[repo].get(filename)
        if body is None:
            return self._send(404, b"Entry not found", {"X-Error-Code": "EntryNotFound"})
        rng = self.headers.get("Range")
        if rng:
            first, last = (int(x) for x in rng.removeprefix("bytes=").split("-"))
            return self._send(
                206, body[first : last + 1], {"Content-Range": f"bytes {first}-{last}/{len(body)}"}
            )
        return self._send(200, body, {})

    def _send(self, status, body, headers):
        self.send_response(status)
        for k, v in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def hub_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def hub(hub_url, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", hub_url)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no token file from the machine
    monkeypatch.setenv("KVLINT_MODELS_DIR", str(tmp_path / "models"))
    return tmp_path / "models"


def test_dense_repo_round_trips(hub):
    path, summary = pull("acme/dense-1b")
    entry = json.loads(Path(path).read_text())
    assert Path(path) == hub / "acme--dense-1b.json"
    assert (
        entry["checkpoint_bytes"] == DENSE_BYTES and "safetensors headers" in entry["checkpoint_bytes_source"]
    )
    assert "unrelated_key" not in entry["config"] and entry["revision"] == "main"
    res = models.resolve("acme/dense-1b")
    assert res.arch is not None and res.arch.kv_heads == 2 and res.arch.checkpoint_bytes == DENSE_BYTES
    assert res.how.startswith("pulled copy") and "pulled by kvlint models pull" in res.arch.source


def test_sharded_headers_price_packed_int4_with_scales_and_zeros(hub):
    path, _ = pull("acme/sharded-awq@v1.0")
    entry = json.loads(Path(path).read_text())
    assert entry["checkpoint_bytes"] == SHARD1_BYTES + SHARD2_BYTES  # not the index's total_size
    assert SHARD1_BYTES == 512 * 64 * 4 + 4 * 512 * 2 + 4 * 64 * 4
    assert entry["revision"] == "v1.0" and entry["config"]["quantization_config"]["quant_method"] == "awq"


def test_mistral_params_json_repo(hub):
    pull("mistralai/params-only")
    arch = models.resolve("mistralai/params-only").arch
    assert arch is not None and (arch.layers, arch.kv_heads, arch.head_dim, arch.hidden_size) == (
        6,
        4,
        128,
        1024,
    )
    assert arch.checkpoint_bytes is None  # no safetensors: priced by config arithmetic


def test_gated_repo_without_token_names_the_fix_and_with_token_pulls(hub, monkeypatch):
    with pytest.raises(HubError) as err:
        pull("acme/gated-7b")
    assert "gated" in str(err.value) and "HF_TOKEN" in err.value.fix
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    path, _ = pull("acme/gated-7b")
    assert Path(path).is_file()


def test_missing_repo_and_unreachable_hub(hub, monkeypatch):
    with pytest.raises(HubError, match="not a model repository"):
        pull("acme/no-such-model")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: connection refused
    with pytest.raises(HubError, match="could not reach") as err:
        pull("acme/dense-1b")
    assert "kvlint models pull acme/dense-1b" in err.value.fix


def test_offline_refuses_cleanly(hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubError, match="HF_HUB_OFFLINE") as err:
        pull("acme/dense-1b")
    assert "unset HF_HUB_OFFLINE" in err.value.fix
    assert not hub.exists()


def test_cli_pull_then_plain_lint_resolves_offline(hub_url, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KVLINT_"))}
    env.update(HF_ENDPOINT=hub_url, HF_HOME=str(tmp_path / "hf-home"))
    kv = [sys.executable, "-m", "kvlint"]
    done = subprocess.run(
        [*kv, "models", "pull", "acme/dense-1b", "acme/nope-1b"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "acme--dense-1b.json" in done.stdout and "acme/nope-1b: " in done.stderr and "fix:" in done.stderr
    assert (tmp_path / ".kvlint" / "models" / "acme--dense-1b.json").is_file()
    spec = tmp_path / "deploy.yaml"
    spec.write_text(
        "kind: ServingSpec\nname: dense\nmodel: acme/dense-1b\ngpu: L4\nmax_context: 4096\nmax_sequences: 4\n"
    )
    env.update(HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    lint = subprocess.run(
        [*kv, "--isolated", "--format", "json", "deploy.yaml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(lint.stdout)
    assert [f["rule"] for f in report["findings"]] == [], report["findings"]
    assert report["deployments"][0]["model_source"].startswith(
        str(Path(".kvlint") / "models" / "acme--dense-1b.json")
    )
    offline = subprocess.run(
        [*kv, "models", "pull", "acme/dense-1b"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (
        offline.returncode == 1
        and "HF_HUB_OFFLINE is set" in offline.stderr
        and "Traceback" not in offline.stderr
    )


def test_pulled_entry_that_is_damaged_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("KVLINT_MODELS_DIR", str(tmp_path))
    (tmp_path / "acme--broken.json").write_text("{not json")
    pulled._index.cache_clear()
    res = models.resolve("acme/broken")
    assert res.arch is None and "pulled copy of acme/broken is unreadable" in res.how


def _lint(tmp_path, env, model, *flags):
    spec = tmp_path / "deploy.yaml"
    spec.write_text(
        f"kind: ServingSpec\nname: m\nmodel: {model}\ngpu: L4\nmax_context: 4096\nmax_sequences: 4\n"
    )
    cmd = [sys.executable, "-m", "kvlint", "--isolated", *flags, "--format", "json", "deploy.yaml"]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    return json.loads(done.stdout)


def test_hub_flag_fetches_on_the_fly_into_a_cache_and_reports_failures_as_kv003(hub_url, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KVLINT_", "XDG_"))}
    env.update(HF_ENDPOINT=hub_url, HF_HOME=str(tmp_path / "hf-home"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    plain = _lint(tmp_path, env, "acme/dense-1b")
    assert [f["rule"] for f in plain["findings"]] == ["KV003"]  # offline by default
    report = _lint(tmp_path, env, "acme/dense-1b", "--hub")
    assert (
        report["findings"] == []
        and (tmp_path / "cache" / "kvlint" / "models" / "acme--dense-1b.json").is_file()
    )
    gated = _lint(tmp_path, env, "acme/gated-7b", "--hub")
    (finding,) = gated["findings"]
    assert finding["rule"] == "KV003" and "gated" in finding["message"] and "HF_TOKEN" in finding["fix"]
    assert finding["line"] == 3  # located at the model's line
    env["HF_HUB_OFFLINE"] = "1"
    offline = _lint(tmp_path, env, "acme/sharded-awq", "--hub")
    assert [f["rule"] for f in offline["findings"]] == ["KV003"] and "unset HF_HUB_OFFLINE" in offline[
        "findings"
    ][0]["fix"]
    cached = _lint(tmp_path, env, "acme/dense-1b", "--hub")  # fetched before: read from the cache offline
    assert cached["findings"] == []


def test_modelopt_repo_records_hf_quant_config(hub):
    """A ModelOpt export states its format in hf_quant_config.json, not in config.json: pull keeps it."""
    path, _ = pull("nvidia/modelopt-fp8")
    entry = json.loads(Path(path).read_text())
    assert entry["hf_quant_config"]["quantization"]["kv_cache_quant_algo"] == "FP8"
    arch = models.resolve("nvidia/modelopt-fp8").arch
    assert arch is not None and arch.quant is not None
    assert arch.quant.method == "modelopt" and arch.quant.kv_cache_dtype == "fp8"


def test_token_file_is_used_when_hf_token_is_unset(hub_url, tmp_path):
    """`huggingface-cli login` writes $HF_HOME/token: a gated repository pulls with it, no HF_TOKEN set
    (a fresh process, as huggingface_hub reads HF_HOME when it is imported)."""
    (tmp_path / "hf-home").mkdir()
    (tmp_path / "hf-home" / "token").write_text(TOKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KVLINT_"))}
    env.update(HF_ENDPOINT=hub_url, HF_HOME=str(tmp_path / "hf-home"))
    done = subprocess.run(
        [sys.executable, "-m", "kvlint", "models", "pull", "acme/gated-7b"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".kvlint" / "models" / "acme--gated-7b.json").is_file()
