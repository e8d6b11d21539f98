"""dstack run configurations: `resources.gpu` read as dstack reads it (its grammar, GB as GiB, the GPUs
gpuhunt's catalogue admits), the engine from `commands`, and a plan on the GPU the file states.
Fixtures in fixtures/stacks/dstack/ are dstack's own examples (source in each header)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, lint

from kvlint.extract.kinds import dstack, dstack_gpu
from kvlint.load import load_bytes
from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

DSTACK = FIXTURES / "stacks" / "dstack"


def _root(text: str):
    (doc,) = load_bytes(text.encode("utf-8"), "x.yaml").documents
    return doc.root


def _request(value: str):
    return dstack_gpu.parse(_root(f"gpu: {value}").get("gpu"))


def _admitted(value: str, image_set: bool = True) -> set[tuple[str, float]]:
    return {(c.name, c.memory) for c in dstack_gpu.admitted(_request(value), image_set)}


def run(name: str):
    path = DSTACK / name
    result = read_and_lint(str(path), Settings(), path.name)
    assert not isinstance(result, str), result
    return result


# --- the grammar (dstack src/dstack/_internal/core/models/resources.py @0.21.2) ----------------------


@pytest.mark.parametrize(
    ("value", "vendor", "names", "count", "memory"),
    [
        ("H100:2", None, ("H100",), (2, 2), None),
        ("8:H200", None, ("H200",), (8, 8), None),  # tokens in any order
        ("24GB", None, None, (1, None), (24, 24)),  # one size is min = max; the count defaults to 1..
        ("24GB..:1..2", None, None, (1, 2), (24, None)),
        ("A100,H100:8", None, ("A100", "H100"), (8, 8), None),
        ("80GB:8", None, None, (8, 8), (80, 80)),
        ("nvidia:1..8", "nvidia", None, (1, 8), None),
        ("tt:n150", "tenstorrent", ("n150",), (1, None), None),
        ("16GB..80GB:2..", None, None, (2, None), (16, 80)),
        ("2", None, None, (2, 2), None),
    ],
)
def test_gpu_text_is_read_as_dstack_reads_it(value, vendor, names, count, memory):
    req = _request(value)
    assert (req.vendor, req.names, req.count, req.memory) == (vendor, names, count, memory)


def test_gpu_mapping_form():
    """As dstack's examples write it (examples/models/wan22/.dstack.yml, examples/llms/llama31/README.md)."""
    wan = dstack_gpu.parse(_root("gpu:\n  name: [H100, H200]\n  count: 1..8\n").get("gpu"))
    assert wan.names == ("H100", "H200") and wan.count == (1, 8)
    llama = dstack_gpu.parse(_root("gpu:\n  memory: 24GB..\n  count: 1..\n").get("gpu"))
    assert llama.memory == (24, None) and llama.count == (1, None) and llama.names is None
    ranged = dstack_gpu.parse(_root("gpu:\n  count: {min: 2, max: 4}\n  total_memory: 160GB..\n").get("gpu"))
    assert ranged.count == (2, 4) and ranged.total_memory == (160, None)


def test_memory_units_are_binary():
    """Memory.parse: GB as written, MB / 1024, TB x 1024 (and dstack takes x1024 MiB per GB)."""
    assert dstack_gpu.memory("24GB") == 24
    assert dstack_gpu.memory("512MB") == 0.5
    assert dstack_gpu.memory("1TB") == 1024
    assert dstack_gpu.memory("1.5 TB") == 1536
    assert dstack_gpu.memory(40) == 40


@pytest.mark.parametrize("value", ["H100:A100", "2..1", "..", "[A100, H100]", "24GB:48GB", "A100,:2"])
def test_what_dstack_refuses_is_a_grammar_error(value):
    with pytest.raises(dstack_gpu.GrammarError):
        _request(value)


# --- what a request admits (gpuhunt constraints.py @0.1.30) ----------------------------------------


def test_a_size_admits_exactly_that_size():
    """`gpu: 24GB` is 24..24: the 24 GB cards, not a 48 GB one (with an image, of any vendor: Tenstorrent's
    n300 too; with dstack's own image, NVIDIA's only)."""
    assert _admitted("24GB") - _admitted("24GB", image_set=False) == {("n300", 24)}
    assert _admitted("24GB", image_set=False) == {
        ("A10", 24),
        ("A10G", 24),
        ("A5000", 24),
        ("L4", 24),
        ("RTX3090", 24),
        ("RTX3090Ti", 24),
        ("RTX4090", 24),
        ("RTX6000", 24),
    }


def test_a_name_admits_every_size_of_it_unless_memory_narrows_it():
    assert _admitted("A100:2") == {("A100", 40), ("A100", 80)}
    assert _admitted("A100:80GB:2") == {("A100", 80)}
    assert _admitted("80GB:8") == {("A100", 80), ("H100", 80)}
    assert _admitted("a100,h100") == {("A100", 40), ("A100", 80), ("H100", 80)}  # names without case


def test_no_name_no_vendor_and_no_image_is_nvidia_only():
    """dstack's own image is CUDA only (set_default_gpu_spec_vendor)."""
    assert ("MI300X", 192) in _admitted("192GB", image_set=True)
    assert _admitted("192GB", image_set=False) == set()


def test_total_memory_raises_the_least_count():
    req = dstack_gpu.parse(_root("gpu:\n  name: H100\n  count: 1..8\n  total_memory: 160GB..\n").get("gpu"))
    assert dstack_gpu.least_count(req, dstack_gpu.admitted(req, True)) == 2


# --- workloads -------------------------------------------------------------------------------------


def test_stated_gpu_and_count_are_planned():
    result = run("vllm-h200x2.dstack.yml")
    (r,) = result.deployments
    d = r.deployment
    assert d.kind == "dstack" and d.name == "llama4-scout" and d.engine.value == "vllm"
    assert d.gpu.value == "h200" and d.gpu.origin == "stated" and d.gpu.where.line == 24
    assert d.gpus_per_pod.value == 2 and d.gpus_per_pod.origin == "stated"
    assert d.tensor_parallel.value == 2  # $DSTACK_GPUS_NUM
    assert d.max_context.value == 256000  # MAX_MODEL_LEN from env
    assert r.gpu is not None and r.gpu.id == "h200" and r.plan is not None
    assert {f.rule for f in result.findings} >= {"KV207"}  # no shm_size: Docker's 64 MiB


def test_a_size_is_checked_on_each_card_it_admits():
    result = run("vllm-24gb.dstack.yml")
    (r,) = result.deployments
    d = r.deployment
    assert set(d.gpu_candidates.value) == {"a10", "a10g", "l4", "rtx-3090", "rtx-4090"}
    assert d.gpus_per_pod.value == 1 and d.gpus_per_pod.origin == "inferred"  # count 1..: the least
    assert d.tensor_parallel.value == 1
    (info,) = [f for f in result.findings if f.rule == "KV002"]
    assert "admits 5 GPU types: checked on each" in info.message and "A5000" in info.message


def test_a_memory_range_admits_the_cards_between():
    (r,) = run("vllm-40gb-48gb.dstack.yml").deployments
    ids = set(r.deployment.gpu_candidates.value)
    assert "a100-40gb-sxm" in ids and {"l40s", "a40", "rtx-a6000"} <= ids
    assert not {"a100-80gb-sxm", "l4"} & ids


def test_trtllm_serve_is_planned_with_the_gpu_and_its_variables_read():
    result = run("trtllm-serve-r1.dstack.yml")
    (r,) = result.deployments
    assert r.deployment.gpu.value == "h200" and r.deployment.gpus_per_pod.value == 8
    # --tp_size $DSTACK_GPUS_NUM and the env's limits reach TensorRT-LLM's plan
    assert (r.settings.tp, r.settings.max_num_seqs, r.settings.max_model_len) == (8, 256, 16384)
    assert r.plan is not None and "KV004" not in [f.rule for f in result.findings]


def test_replica_groups_are_workloads_of_their_own():
    """dstack's PD-disaggregation example: the router group starts no engine, prefill and decode do."""
    result = run("sglang-pd-replica-groups.dstack.yml")
    found = {r.deployment.name: r for r in result.deployments}
    assert set(found) == {"amd-sglang-pd-service/1", "amd-sglang-pd-service/2"}
    for r in found.values():
        d = r.deployment
        assert d.engine.value == "sglang" and d.model.value == "Qwen/Qwen2.5-72B-Instruct"
        assert d.gpu.value == "mi300x" and d.gpus.value == 8 and d.tensor_parallel.value == 8
        assert r.plan is not None
    assert found["amd-sglang-pd-service/2"].deployment.gpu.where.line == 51


def test_multi_node_task_sets_dstack_variables():
    text = """type: task
name: big
nodes: 2
image: vllm/vllm-openai:v0.10.0
commands:
  - vllm serve meta-llama/Llama-3.1-405B-Instruct --tensor-parallel-size $DSTACK_GPUS_PER_NODE
    --pipeline-parallel-size $DSTACK_NODES_NUM
resources:
  gpu: H100:8
  shm_size: 64GB
"""
    result = lint(text, ".dstack.yml")
    (r,) = result.deployments
    d = r.deployment
    assert d.pods.value == 2 and d.gpus.value == 16
    assert d.tensor_parallel.value == 8 and d.pipeline_parallel.value == 2
    assert d.shm_size.value == "64Gi"  # dstack's GB is a GiB
    assert "KV207" not in {f.rule for f in result.findings}


def test_a_gpu_dstack_refuses_is_kv005_at_it():
    text = "type: service\ncommands: [vllm serve Qwen/Qwen3-8B]\nresources:\n  gpu: H100:A100\n"
    result = lint(text, "svc.dstack.yml")
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.where.line == 4 and "two name tokens" in f.message


def test_tpu_request_is_not_a_gpu_workload():
    text = (
        "type: service\nimage: x/tgi-tpu\ncommands: [text-generation-launcher --model-id google/gemma-2b]\n"
    )
    text += "resources:\n  gpu: v5litepod-4\n"
    result = lint(text, "svc.dstack.yml")
    assert [(f.rule, "TPU" in f.message) for f in result.findings] == [("KV004", True)]


# --- detection: dstack files only ------------------------------------------------------------------

NOT_DSTACK = {
    "github workflow": "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - run: vllm serve x\n",
    "compose": "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: --model x\n",
    "helm values": "image:\n  repository: vllm/vllm-openai\nservice:\n  type: ClusterIP\n"
    "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
    "generic config": "type: service\nname: api\nport: 8080\nlog_level: info\n",
    "dstack fleet": "type: fleet\nname: my-fleet\nnodes: 2\nresources:\n  gpu: H100:8\n",
}


@pytest.mark.parametrize("name", sorted(NOT_DSTACK))
def test_other_files_are_not_claimed(name):
    assert not dstack.is_dstack(_root(NOT_DSTACK[name]))


def test_dstack_files_are_claimed():
    for path in DSTACK.glob("*.dstack.yml"):
        assert dstack.is_dstack(_root(path.read_text())), path.name


def test_a_dev_environment_runs_its_init_commands():
    text = "type: dev-environment\nide: vscode\nimage: vllm/vllm-openai:v0.10.0\n"
    text += "init:\n  - vllm serve Qwen/Qwen3-8B --max-model-len 8192\nresources:\n  gpu: L4\n"
    (r,) = lint(text, ".dstack.yml").deployments
    assert r.deployment.max_context.value == 8192 and r.deployment.gpu.value == "l4"


def test_no_gpu_asked_for_is_a_warning_at_it():
    text = "type: service\nimage: vllm/vllm-openai:v0.10.0\ncommands: [vllm serve Qwen/Qwen3-8B]\n"
    result = lint(text + "resources:\n  gpu: 0\n", ".dstack.yml")
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.severity.name == "WARNING" and "no GPU" in f.message and f.where.line == 5
    assert result.deployments[0].deployment.gpus_per_pod.value == 0


@pytest.mark.parametrize(
    "text",
    [
        "type: service\nentrypoint: 'sh -c \"unclosed'\ncommands: [x]\n",
        "type: service\ncommands: [null, 5, vllm serve Qwen/Qwen3-8B]\nresources: 5\nenv: 5\nnodes: '2'\n",
        "type: service\nreplicas: [1, {commands: [vllm serve Qwen/Qwen3-8B]}]\n",
        "type: service\ncommands: [vllm serve Qwen/Qwen3-8B]\nresources: {gpu: 1.5, shm_size: abc}\n",
    ],
)
def test_odd_values_give_findings_not_tracebacks(text):
    assert "KV001" not in {f.rule for f in lint(text, ".dstack.yml").findings}
