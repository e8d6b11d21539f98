"""llama.cpp's server and Ollama (kvlint.engines.llamacpp): recognised by what runs, options read from the command
line and the variables, and the buffers llama.cpp allocates (slots sharing -c, layers left on the CPU, the
KV cache that does not fit)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from kvlint.catalog import models
from kvlint.engines.llamacpp import layers as L
from kvlint.engines.llamacpp.launch import image_version

POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
      - name: s
        image: {image}
{body}
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _lint(tmp_path: Path, image: str, body: str) -> dict:
    (tmp_path / "d.yaml").write_text(POD.format(image=image, body=body))
    cmd = [sys.executable, "-m", "kvlint", "--isolated", "--format", "json", str(tmp_path / "d.yaml")]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    return json.loads(out.stdout)


def test_image_tags_name_the_build_or_the_ollama_release():
    assert image_version("ghcr.io/ggml-org/llama.cpp:server-cuda-b4729") == "b4729"
    assert image_version("ghcr.io/ggml-org/llama.cpp:full-b4729") == "b4729"
    assert image_version("ghcr.io/ggml-org/llama.cpp:server-cuda") is None
    assert image_version("ollama/ollama:0.6.8") == "0.6.8"
    assert image_version("ollama/ollama:latest") is None


def test_slots_split_the_context_without_a_unified_cache(tmp_path):
    body = '        args: [-m, /m/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf, -c, "16384", -np, "4", -ngl, "99"]'
    report = _lint(tmp_path, "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500", body)
    plan = report["deployments"][0]["plan"]
    assert plan["kv_cache_tokens"] == 16384 and plan["breakdown"]["context_at_max_sequences"] == 4096
    assert plan["max_concurrency"] == 4.0


def test_unset_slots_are_four_over_one_unified_cache_in_newer_builds(tmp_path):
    body = '        args: [-m, /m/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf, -c, "16384"]'
    new = _lint(tmp_path, "ghcr.io/ggml-org/llama.cpp:server-cuda", body)["deployments"][0]
    assert new["plan"]["breakdown"]["context_at_max_sequences"] == 16384 and new["max_sequences"] == 4
    old = _lint(tmp_path, "ghcr.io/ggml-org/llama.cpp:server-cuda-b4729", body)["deployments"][0]
    assert old["plan"]["breakdown"]["context_at_max_sequences"] == 16384 and old["max_sequences"] == 1


def test_the_variables_set_what_the_command_line_leaves_unset(tmp_path):
    body = (
        "        args: [-m, /m/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf, -c, '8192']\n"
        "        env: [{name: LLAMA_ARG_CTX_SIZE, value: '65536'}, {name: LLAMA_ARG_N_PARALLEL, value: '2'}]"
    )
    plan = _lint(tmp_path, "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500", body)["deployments"][0]["plan"]
    # -c wins over LLAMA_ARG_CTX_SIZE; LLAMA_ARG_N_PARALLEL's 2 slots split it
    assert plan["kv_cache_tokens"] == 8192 and plan["breakdown"]["context_at_max_sequences"] == 4096


def test_layers_left_on_the_cpu_are_a_warning_with_the_figure(tmp_path):
    body = '        args: [-m, /m/Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf, -c, "4096", -ngl, "30"]'
    report = _lint(tmp_path, "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500", body)
    (warn,) = [f for f in report["findings"] if f["rule"] == "KV004"]
    assert warn["severity"] == "warning" and "50 of 80 layers on the CPU (-ngl 30)" in warn["message"]
    assert not [f for f in report["findings"] if f["rule"] in ("KV101", "KV102")]


def test_a_context_whose_cache_does_not_fit_is_refused_at_start_up(tmp_path):
    body = '        args: [-m, /m/Meta-Llama-3.1-8B-Instruct-Q8_0.gguf, -c, "131072", -ngl, "99"]'
    report = _lint(tmp_path, "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500", body)
    (kv102,) = [f for f in report["findings"] if f["rule"] == "KV102"]
    assert kv102["severity"] == "error" and "failed to allocate buffer for kv cache" in kv102["message"]
    half = body.replace("131072", "65536")
    assert not [f for f in _lint(tmp_path, "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500", half)["findings"]
                if f["rule"] == "KV102"]  # fmt: skip


def test_ollama_asks_for_num_ctx_times_num_parallel_cells(tmp_path):
    body = (
        "        env: [{name: OLLAMA_CONTEXT_LENGTH, value: '8192'}, {name: OLLAMA_NUM_PARALLEL, value: '2'}]\n"
        "        args: [serve]"
    )
    report = _lint(tmp_path, "ollama/ollama:0.6.8", body)
    (kv004,) = [f for f in report["findings"] if f["rule"] == "KV004"]
    assert "pulls the model it serves at run time" in kv004["message"]


def test_sliding_window_layers_keep_the_window_not_the_context():
    arch = models.resolve("google/gemma-3-12b-it").arch
    assert arch is not None and arch.sliding_window
    swa = L.window_cells(arch, 32768, False, 1, 512, 256)
    assert swa == L.pad(arch.sliding_window + 512, 256)
    kv = L.kv_by_layer(arch, 32768, 1, swa, False, 2.0, 2.0)
    full = L.kv_by_layer(arch, 32768, 1, swa, True, 2.0, 2.0)
    assert sum(kv) < sum(full) and max(kv) == max(full)


def _compute_mib(tmp_path: Path, image: str, body: str) -> float:
    plan = _lint(tmp_path, image, body)["deployments"][0]["plan"]
    (term,) = [t for t in plan["breakdown"]["terms"] if t["label"] == "compute buffer"]
    return term["bytes"] / 2**20


def test_without_flash_attention_the_compute_buffer_grows_with_the_context(tmp_path):
    m = "[-m, /m/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf, -ngl, '99', -fa, {fa}, -c, '{c}']"
    image = "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500"
    off = [_compute_mib(tmp_path, image, f"        args: {m.format(fa='off', c=c)}") for c in (4096, 32768)]
    on = [_compute_mib(tmp_path, image, f"        args: {m.format(fa='on', c=c)}") for c in (4096, 32768)]
    assert off[1] > 4 * off[0]  # the attention scores span every cell
    assert on[0] == on[1] < off[1]  # flash attention keeps no scores: the logits bound it
