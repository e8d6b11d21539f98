"""Baseten Truss config.yaml: the GPU from `resources.accelerator` as Truss reads it, the engine from
`docker_server.start_command` (through the engine packages) or `trt_llm`, a plan on the stated GPU.
Fixtures in fixtures/stacks/truss/ are basetenlabs/truss-examples configs (source in each header)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, lint

from kvlint.extract.kinds import truss
from kvlint.load import load_bytes
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

TRUSS = FIXTURES / "stacks" / "truss"
SERVER = """model_name: m
base_image:
  image: vllm/vllm-openai:v0.10.0
docker_server:
  start_command: vllm serve Qwen/Qwen3-8B --port 8000
  server_port: 8000
resources:
  accelerator: {acc}
"""


def _root(text: str):
    (doc,) = load_bytes(text.encode("utf-8"), "config.yaml").documents
    return doc.root


def run(name: str):
    path = TRUSS / name / "config.yaml"
    result = read_and_lint(str(path), Settings(), "config.yaml")
    assert not isinstance(result, str), result
    return result


def _one(text: str):
    result = lint(text, "config.yaml")
    (r,) = result.deployments
    return r, result


@pytest.mark.parametrize(
    ("acc", "gpu", "count"),
    [
        ("A100:2", "a100-80gb-sxm", 2),  # Truss names the 40 GB one apart (A100_40GB)
        ("A100_40GB", "a100-40gb-sxm", 1),
        ("H100:8", "h100-sxm", 8),
        ("H100_40GB", "h100-sxm:3g.40gb", 1),  # half an H100 by MIG
        ("A10G", "a10g", 1),
        ("L4:4", "l4", 4),
        ("{accelerator: H200, count: 2}", "h200", 2),
    ],
)
def test_accelerator_is_read_as_truss_reads_it(acc, gpu, count):
    r, _ = _one(SERVER.format(acc=acc))
    assert r.deployment.gpu.value == gpu and r.deployment.gpus_per_pod.value == count
    assert r.gpu is not None and r.plan is not None


def test_a_mig_slice_plans_on_the_slice_memory():
    half, _ = _one(SERVER.format(acc="H100_40GB"))
    whole, _ = _one(SERVER.format(acc="H100"))
    assert half.gpu.engine_bytes < whole.gpu.engine_bytes / 2 + 2**30


@pytest.mark.parametrize("acc", ["A100-80GB", "H100:0", "H100:two"])
def test_what_truss_refuses_is_kv005_at_the_accelerator(acc):
    _, result = _one(SERVER.format(acc=acc))
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.where.line == 8 and "Truss refuses" in f.message


def test_an_accelerator_truss_does_not_size_is_said():
    """V100 is 16 or 32 GB and Truss does not say which: kvlint's catalog calls it ambiguous."""
    _, result = _one(SERVER.format(acc="V100"))
    assert any(f.rule == "KV002" and "ambiguous" in f.message for f in result.findings)


def test_vllm_start_command_is_planned_on_the_stated_gpu():
    result = run("vllm-h100")
    (r,) = result.deployments
    d = r.deployment
    assert d.kind == "truss" and d.name == "Qwen 3 30B-A3B vLLM"
    assert d.engine.value == "vllm" and d.engine_version.value == "0.8.5"  # base_image's tag
    assert d.model.value == "Qwen/Qwen3-30B-A3B" and d.model.origin == "stated"  # from the command line
    assert d.gpu.value == "h100-sxm" and d.gpus.value == 1 and r.plan is not None
    assert d.engine.where.line == 6  # inside the `sh -c "…"`


def test_sglang_inside_sh_c_with_a_command_substitution():
    (r,) = run("sglang-h100").deployments
    d = r.deployment
    assert d.engine.value == "sglang" and d.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert d.engine.where.line == 8 and r.plan is not None


def test_trt_llm_is_planned_by_tensorrt_llm_with_the_builders_settings():
    result = run("trt-llm-h100x2")
    (r,) = result.deployments
    d = r.deployment
    assert d.gpu.value == "h100-sxm" and d.gpus_per_pod.value == 2
    assert d.model.value == "deepseek-ai/DeepSeek-R1-Distill-Llama-70B"
    s = r.settings
    # build.max_seq_len, build.tensor_parallel_count, build.quantization_type fp8_kv (FP8 weights and KV)
    assert (s.engine, s.max_model_len, s.tp, s.quantization, s.kv_cache_dtype) == (
        "trtllm",
        131072,
        2,
        "fp8",
        "fp8",
    )
    assert r.plan is not None and "KV004" not in [f.rule for f in result.findings]


def test_a_python_model_on_a_gpu_is_kv004_not_silence():
    result = run("python-vllm-a100x2")
    assert [f.rule for f in result.findings] == ["KV004"]
    assert "model/model.py" in result.findings[0].message


def test_node_count_is_the_pods_of_one_deployment():
    text = SERVER.format(acc="H100:8") + "  node_count: 2\n"
    r, _ = _one(text)
    assert r.deployment.pods.value == 2 and r.deployment.gpus.value == 16


# --- detection: Truss configs only -----------------------------------------------------------------

NOT_TRUSS = {
    "github workflow": "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - run: vllm serve x\n",
    "compose": "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: --model x\n",
    "helm values": "image:\n  repository: vllm/vllm-openai\nsecrets: {}\n"
    "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
    "generic config": "model_name: resnet\nresources:\n  cpu: 2\n  memory: 4Gi\nlog_level: info\n",
    "dstack": "type: service\ncommands: [vllm serve x]\nresources:\n  gpu: H100:2\n",
}


@pytest.mark.parametrize("name", sorted(NOT_TRUSS))
def test_other_files_are_not_claimed(name):
    assert not truss.is_truss(_root(NOT_TRUSS[name]))


def test_truss_configs_are_claimed():
    for path in TRUSS.glob("*/config.yaml"):
        assert truss.is_truss(_root(path.read_text())), path


def test_a_cpu_server_that_starts_no_engine_is_no_workload():
    text = "model_name: api\ndocker_server:\n  start_command: python app.py\n  server_port: 8000\n"
    assert lint(text, "config.yaml").deployments == []
    on_gpu = text + "resources:\n  accelerator: L4\n"
    result = lint(on_gpu, "config.yaml")
    assert [f.rule for f in result.findings] == ["KV004"] and "start_command" in result.findings[0].message


@pytest.mark.parametrize("acc", ["[H100]", "{count: 2}"])
def test_an_accelerator_of_another_shape_is_kv005(acc):
    _, result = _one(SERVER.format(acc=acc))
    assert any(f.rule == "KV005" and "no accelerator is named" in f.message for f in result.findings)
