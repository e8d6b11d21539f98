"""llama.cpp cases found linting public compose files and manifests (an embedding and a chat service on
llama.cpp's server-cuda images, a llama-server configured by LLAMA_ARG_* variables alone):

- a KV cache the GPU does not hold (every layer on the CPU, or --no-kv-offload) is not "no memory is left for
  the KV cache": llama.cpp starts, and the cache is in host memory, which kvlint does not check;
- an option and its value in one exec-form argument (`- -m /models/x.gguf`) is llama-server's "invalid
  argument" and exit, not a silently dropped setting;
- GPUs reserved in a count kvlint cannot read (compose `count: all`) are GPUs: never "requests no GPU, so
  llama.cpp runs on the host CPU", and an image-only service with them is read, not skipped."""

from __future__ import annotations

import pytest
from conftest import lint

from kvlint.resolve import Defaults

MODEL = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M"
POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
        - name: llama
          image: ghcr.io/ggml-org/llama.cpp:server-cuda-{build}
          args: {args}
          resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def _pod(args: list[str], build: str = "b6000") -> str:
    return POD.format(build=build, args="[" + ", ".join(f'"{a}"' for a in args) + "]")


@pytest.mark.parametrize(
    "args",
    [
        ["-hf", MODEL, "-c", "8192"],  # b6000: -ngl 0 by default, every layer on the CPU
        ["-hf", MODEL, "-c", "8192", "-ngl", "0"],
        ["-hf", MODEL, "-c", "131072", "-ngl", "99", "-nkvo"],
        ["-hf", MODEL, "-c", "131072", "-ngl", "99", "--no-kv-offload"],
    ],
)
def test_a_kv_cache_in_host_memory_is_not_an_empty_gpu_pool(args):
    result = lint(_pod(args))
    assert not [f for f in result.findings if f.rule in ("KV102", "KV103")], result.findings
    (r,) = result.deployments
    assert r.plan.kv_per_token == 0
    (line,) = [x for x in r.plan.lines if x.startswith("KV cache:")]
    assert "in host memory" in line and "none on the GPU: not checked" in line


def test_the_gpu_share_of_a_partly_offloaded_cache_is_still_checked():
    """The class is 'no KV on the GPU', not 'some layers on the CPU': 20 of 32 layers offloaded at 128k cells
    keep 20 layers' cache on the L4, which KV102 still weighs."""
    result = lint(_pod(["-hf", MODEL, "-c", "131072", "-ngl", "20"]))
    (r,) = result.deployments
    assert r.plan.kv_per_token > 0
    assert all("in host memory" not in x for x in r.plan.lines)


@pytest.mark.parametrize(
    ("item", "option"),
    [
        ("-c 8192", "-c"),
        ("--ctx-size 8192", "--ctx-size"),
        ("-m /models/m.gguf", "-m"),
        ("--port 8080", "--port"),
    ],
)
def test_an_option_and_its_value_in_one_argument_is_an_error_at_it(item, option):
    result = lint(_pod(["-hf", MODEL, "-ngl", "99", item]))
    (said,) = [f for f in result.findings if f.rule == "KV005"]
    assert said.severity.name == "ERROR"
    assert (
        said.message.startswith(f"'{item}' is one argument") and f"invalid argument: {item}" in said.message
    )
    assert said.where.line == 11 and said.where.end_column - said.where.column == len(item)  # the item itself
    assert said.fix == f"write {option} and its value as two arguments"


def test_a_value_that_starts_with_a_dash_is_the_option_before_it_s():
    """`--alias "-c 8192"`: the text is --alias's value (a served name), which llama-server takes as it is."""
    result = lint(_pod(["-hf", MODEL, "-ngl", "99", "--alias", "-c 8192"]))
    assert not [f for f in result.findings if f.rule == "KV005"], result.findings


COMPOSE = """\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b6500
{body}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
"""


@pytest.mark.parametrize(
    "body",
    [
        "    command: [-hf, " + MODEL + ", -c, '8192', -ngl, '99']",
        "    environment:\n      LLAMA_ARG_HF_REPO: " + MODEL + "\n      LLAMA_ARG_CTX_SIZE: '8192'",
    ],
    ids=["command", "variables-only"],
)
def test_count_all_is_gpus_of_an_unknown_count_not_none(body):
    result = lint(COMPOSE.format(body=body), path="compose.yaml")
    (r,) = result.deployments
    assert r.deployment.accelerator == "gpu" and r.deployment.max_context.value == 8192
    messages = [f.message for f in result.findings]
    assert not [m for m in messages if "requests no GPU" in m], messages
    (count,) = [f for f in result.findings if f.rule == "KV005"]
    assert "count: all reserves every GPU of the host" in count.message


OLLAMA = """\
services:
  ollama:
    image: ollama/ollama:0.6.8
    entrypoint: ["/bin/sh", "-c"]
    command:
      - |
{script}
    deploy:
      resources:
        reservations:
          devices:
            - {{driver: nvidia, count: 1, capabilities: [gpu]}}
"""


def _ollama(*lines: str) -> str:
    return OLLAMA.format(script="\n".join(" " * 8 + line for line in lines))


@pytest.mark.parametrize("verb", ["pull", "run"])
def test_the_one_model_an_ollama_start_script_pulls_is_the_model(verb):
    """`ollama serve & sleep 5; ollama pull llama3; wait` (a public compose file's shape): the file does name the
    model, in the script; it was "Ollama pulls the model it serves at run time ... the file names none"."""
    text = _ollama("ollama serve &", "sleep 5", f"ollama {verb} llama3", "wait")
    result = lint(text, path="compose.yaml", defaults=Defaults(gpu="l4"))
    (r,) = result.deployments
    assert (
        r.deployment.model.where.line == 9 and "Ollama library tag llama3:latest" in r.deployment.model.note
    )
    assert r.model is not None and r.model.id == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert r.plan is not None and not [f for f in result.findings if f.rule == "KV004"]


def test_several_pulled_models_are_named_and_not_guessed_between():
    text = _ollama("ollama serve &", "sleep 5", "ollama pull llama3", "ollama pull nomic-embed-text", "wait")
    result = lint(text, path="compose.yaml", defaults=Defaults(gpu="l4"))
    (said,) = [f for f in result.findings if f.rule == "KV004"]
    assert "pulls 2 models (llama3, nomic-embed-text)" in said.message and said.where.line == 9
    assert result.deployments[0].plan is None


def test_a_pulled_model_in_a_variable_is_not_taken():
    text = _ollama("ollama serve &", "sleep 5", "ollama pull $MODEL", "wait")
    result = lint(text, path="compose.yaml", defaults=Defaults(gpu="l4"))
    (said,) = [f for f in result.findings if f.rule == "KV004"]
    assert "Ollama pulls the model it serves at run time" in said.message


@pytest.mark.parametrize(("visible", "gpus"), [("0", 1), ("0,1", 2), ("GPU-1a2b,GPU-3c4d,GPU-5e6f", 3)])
def test_cuda_visible_devices_counts_the_gpus_count_all_reserves(visible, gpus):
    """`count: all` with CUDA_VISIBLE_DEVICES=0 in the service's environment (a public SGLang compose file):
    CUDA shows the engine only the listed devices, so the count is theirs, not the host's unknown number."""
    text = COMPOSE.format(
        body=f"    environment: ['CUDA_VISIBLE_DEVICES={visible}']\n    command: [-hf, {MODEL}, -c, '8192', -ngl, '99']"
    )
    result = lint(text, path="compose.yaml")
    (r,) = result.deployments
    assert r.deployment.gpus.value == gpus and r.deployment.gpus.where.line == 4
    assert not [f for f in result.findings if f.rule == "KV005"], result.findings


@pytest.mark.parametrize("visible", ["${GPUS}", "", "-1", "all"])
def test_a_cuda_visible_devices_that_lists_no_devices_leaves_count_all_unknown(visible):
    text = COMPOSE.format(
        body=f"    environment: ['CUDA_VISIBLE_DEVICES={visible}']\n    command: [-hf, {MODEL}]"
    )
    result = lint(text, path="compose.yaml")
    assert [f.rule for f in result.findings if f.rule == "KV005"], result.findings
