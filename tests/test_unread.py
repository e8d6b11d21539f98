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

from kvlint.lint import read_and_lint
from kvlint.settings import Settings

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
