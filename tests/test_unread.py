"""Issue 12: a file that holds a GPU container or an engine command is never "no problems found".

Over both corpus folders, every file that requests an accelerator or carries an engine command
line — found here by reading the YAML with ruamel.yaml itself, not with kvlint — gives either a
workload kvlint reads or a KV001/KV004/KV005 that says what it could not read.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import SHARED, lint

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

ACCELERATOR = re.compile(
    r"^(nvidia\.com/(gpu|mig-.+)|amd\.com/gpu|google\.com/tpu|habana\.ai/gaudi|aws\.amazon\.com/neuron\w*|huawei\.com/Ascend\w*)$"
)
ENGINE = re.compile(
    r"(?<![\w/.-])(vllm\s+serve|vllm\.entrypoints|sglang\.launch_server|sglang\s+serve|text-generation-launcher|"
    r"trtllm-serve|llama-server|ollama\s+serve|dynamo\.(vllm|sglang|trtllm)|-m\s+huggingfaceserver)\b"
)
# limits that are a cluster's capacity, not a workload's request; KubeAI's profile definitions
CAPACITY_KINDS = {"NodePool", "NodeClaim", "ResourceQuota", "LimitRange", "ClusterQueue", "ResourceFlavor"}
SAID = {"KV001", "KV004", "KV005"}


def _files() -> list[Path]:
    out: list[Path] = []
    for folder in ("manifests", "manifests2"):
        base = SHARED / "corpus" / folder
        if base.is_dir():
            out += sorted(
                p for p in base.iterdir() if p.suffix in (".yaml", ".yml") and p.name != "INDEX.yaml"
            )
    return out


def _requests_or_runs(value, keys: tuple[str, ...] = ()) -> bool:
    """An accelerator count above zero under `limits`/`requests`, or an engine command in a string."""
    if isinstance(value, dict):
        if keys and keys[-1] in ("limits", "requests") and "resourceProfiles" not in keys:
            for name, count in value.items():
                if ACCELERATOR.match(str(name)) and str(count).strip().strip("\"'") not in ("0", ""):
                    return True
        return any(_requests_or_runs(v, (*keys, str(k))) for k, v in value.items())
    if isinstance(value, list):
        return any(_requests_or_runs(v, keys) for v in value)
    return isinstance(value, str) and ENGINE.search(value) is not None


def _gpu_or_engine(path: Path) -> bool:
    from ruamel.yaml import YAML

    try:
        docs = list(YAML(typ="safe", pure=True).load_all(path.read_text(errors="replace")))
    except Exception:  # noqa: BLE001 - broken YAML is KV001's (tested in test_corpus)
        return False
    return any(
        _requests_or_runs(d) for d in docs if not (isinstance(d, dict) and d.get("kind") in CAPACITY_KINDS)
    )


FILES = [p for p in _files() if _gpu_or_engine(p)]


@pytest.mark.skipif(not FILES, reason="../shared/corpus is absent")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:80])
def test_gpu_or_engine_file_is_read_or_said(path: Path):
    result = read_and_lint(str(path), Settings(), path.name)
    assert not isinstance(result, str), result
    said = {f.rule for f in result.findings} & SAID
    assert result.deployments or said, f"{path.name}: no workload and no KV001/KV004/KV005"


def test_the_corpus_scan_finds_files_of_both_kinds():
    if not FILES:
        pytest.skip("../shared/corpus is absent")
    assert len(FILES) > 150  # most of the ~300 real files request GPUs or start an engine


GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: us-docker.pkg.dev/acme/train:1
          command: ["python", "train.py"]
          resources:
            limits:
              nvidia.com/gpu: 8
"""


def test_a_gpu_container_kvlint_does_not_read_is_kv004_at_its_request():
    (f,) = lint(GPU_JOB).findings
    assert (
        f.rule == "KV004"
        and f.where.line == 14
        and "trainer" in f.message
        and "8 nvidia.com/gpu" in f.message
    )


def test_a_gpu_request_in_an_unknown_layout_and_an_engine_command_are_kv004():
    flavour = "kind: OpenModel\napiVersion: llmaz.io/v1alpha1\nmetadata: {name: m}\nspec:\n  flavors:\n    - limits:\n        nvidia.com/gpu: 2\n"
    (f,) = lint(flavour).findings
    assert f.rule == "KV004" and f.where.line == 7 and "2 nvidia.com/gpu" in f.message
    script = "scenario:\n  launch: |\n    vllm serve Qwen/Qwen3-8B --tensor-parallel-size 8\n"
    (f,) = lint(script).findings
    assert f.rule == "KV004" and "vllm serve" in f.message


def test_zero_gpus_and_a_node_pool_capacity_are_not_reported():
    assert lint(GPU_JOB.replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 0")).findings == []
    pool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  limits:\n    nvidia.com/gpu: 8\n"
    assert lint(pool).findings == []


def test_a_file_kvlint_reads_gets_no_extra_kv004():
    from conftest import FIXTURES

    result = read_and_lint(str(FIXTURES / "KV201" / "good.yaml"), Settings(), "good.yaml")
    assert not isinstance(result, str) and result.findings == []


# Serving custom resources of stacks kvlint has no reader for (issue 12): found here from the YAML's own
# apiVersion group and kind, read with ruamel.yaml, not with kvlint. Each must give a located KV004 that
# says what lives outside the file.
SERVING_CRS = {
    ("ome.io", "InferenceService"),
    ("kaito.sh", "InferenceSet"),
    ("inference.llmaz.io", "Playground"),
    ("networking.serving.volcano.sh", "ModelServer"),
    ("gmc.opea.io", "GMConnector"),
}
# Chart values / configs that name a model and an engine or GPU count in a layout no reader takes:
# a model key holding a Hugging Face style id (org/name) at most three levels down, and an engine word
# (or a GPU count key) among the keys. production-stack (`servingEngineSpec`) and llm-d-modelservice
# (`modelArtifacts`) values have readers and their own tests in test_stacks.
MODEL_KEYS = {"hfModelId", "modelURL", "id", "name"}
ENGINE_KEYS = {"sglang", "vllm", "nim-llm", "backendRuntime", "gpus"}
READ_LAYOUTS = {"servingEngineSpec", "modelArtifacts"}


def _docs(path: Path) -> list:
    from ruamel.yaml import YAML

    try:
        return list(YAML(typ="safe", pure=True).load_all(path.read_text(errors="replace")))
    except Exception:  # noqa: BLE001 - broken YAML is KV001's
        return []


def _serving_crs(path: Path) -> list[str]:
    out = []
    for d in _docs(path):
        if isinstance(d, dict) and isinstance(d.get("apiVersion"), str):
            if (d["apiVersion"].split("/")[0], d.get("kind")) in SERVING_CRS:
                out.append(str(d["kind"]))
    return out


def _keys(value, depth: int = 0):
    if isinstance(value, dict) and depth < 4:
        for k, v in value.items():
            yield str(k), v
            yield from _keys(v, depth + 1)
    elif isinstance(value, list) and depth < 4:
        for v in value:
            yield from _keys(v, depth + 1)


def _serving_values(path: Path) -> bool:
    for d in _docs(path):
        if not isinstance(d, dict) or {"kind", "apiVersion", *READ_LAYOUTS} & set(d):
            continue
        pairs = list(_keys(d))
        model = any(
            k in MODEL_KEYS and isinstance(v, str) and re.fullmatch(r"[\w.-]+/[\w.-]+", v) for k, v in pairs
        )
        engine = any(k in ENGINE_KEYS and v not in (None, "", 0, False) for k, v in pairs)
        if model and engine:
            return True
    return False


CR_FILES = [p for p in _files() if _serving_crs(p)]
VALUE_FILES = [p for p in _files() if _serving_values(p)]


@pytest.mark.skipif(not CR_FILES, reason="../shared/corpus is absent")
@pytest.mark.parametrize("path", CR_FILES, ids=lambda p: p.name[:80])
def test_a_serving_resource_of_an_unread_stack_is_read_or_said(path: Path):
    result = read_and_lint(str(path), Settings(), path.name)
    assert not isinstance(result, str), result
    said = [f for f in result.findings if f.rule in SAID]
    assert result.deployments or said, f"{path.name}: {_serving_crs(path)} and no finding"
    if not result.deployments:
        assert any(f.where.line > 0 and "not checked" in f.message for f in said)


@pytest.mark.skipif(not VALUE_FILES, reason="../shared/corpus is absent")
@pytest.mark.parametrize("path", VALUE_FILES, ids=lambda p: p.name[:80])
def test_serving_values_naming_a_model_and_an_engine_are_read_or_said(path: Path):
    result = read_and_lint(str(path), Settings(), path.name)
    assert not isinstance(result, str), result
    assert result.deployments or {f.rule for f in result.findings} & SAID, f"{path.name}: silent"


def test_the_serving_class_scan_finds_both_kinds_in_the_corpus():
    if not CR_FILES:
        pytest.skip("../shared/corpus is absent")
    kinds = {k for p in CR_FILES for k in _serving_crs(p)}
    assert kinds == {kind for _group, kind in SERVING_CRS}  # each class has a real file
    assert len(VALUE_FILES) >= 3


def test_an_ome_inference_service_says_its_runtime_is_elsewhere():
    isvc = (
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: r1}\n"
        "spec:\n  model:\n    name: deepseek-r1\n  runtime:\n    name: srt-deepseek\n"
    )
    (f,) = lint(isvc).findings  # read by extract/kinds/ome.py: the runtime it names is not in the file
    assert (
        f.rule == "KV004"
        and f.where.line == 3
        and "OME runtime srt-deepseek is not in this file" in f.message
    )
    assert lint(isvc.replace("ome.io/v1beta1", "example.com/v1")).findings == []


def test_an_engine_options_file_and_an_ollama_override_are_kv004():
    options = (
        "backend: pytorch\ntensor_parallel_size: 16\nmax_seq_len: 8448\nkv_cache_config:\n  dtype: fp8\n"
    )
    (f,) = lint(options).findings
    assert f.rule == "KV004" and f.where.line == 2 and "launch command" in f.message
    # the ollama chart's values with models are read (extract/charts/ollama_chart.py): planned, not a KV004
    ollama = "ollama:\n  gpu:\n    enabled: true\n    number: 1\n  models:\n    - gemma:7b\n"
    (f,) = lint(ollama).findings
    assert f.rule == "KV002" and f.where.line == 6 and "fits on" in f.message
    # without ollama.gpu the chart requests no GPU (values.yaml gpu.enabled false): Ollama on the CPU
    (f,) = lint("ollama:\n  models:\n    - gemma:7b\n").findings
    assert f.rule == "KV004" and "requests no GPU" in f.message
    # and values that list no model keep the run-time-pull answer
    (f,) = lint("ollama:\n  gpu:\n    enabled: true\n  models:\n    pull: []\n").findings
    assert f.rule == "KV004" and "pull no model at start" in f.message
