"""LoRA adapters (issue #11): served on their base model, named in the report, their memory named as
not priced; the coverage script counts an adapter id as an adapter of its workload's base."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, carried

from kvlint.engines.vllm import lora
from kvlint.extract.pod.adapters import vllm_lora_modules
from kvlint.extract.pod.argv import Token

KUBEAI = """apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: tinyllama-chat-adapters
spec:
  features: [TextGeneration]
  url: hf://TinyLlama/TinyLlama-1.1B-Chat-v0.3
  adapters:
  - name: sql
    url: hf://example-org/tinyllama-sql-lora
  - name: colors
    url: s3://example-bucket/adapters/tinyllama-colorist-lora
  engine: VLLM
  resourceProfile: nvidia-gpu-l4:1
  minReplicas: 1
"""


def _json(path: Path) -> dict:
    cmd = [sys.executable, "-m", "kvlint", "--isolated", "--format", "json", str(path)]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False).stdout)


def test_kubeai_adapters_are_named_and_the_workload_is_planned_on_its_base(tmp_path):
    # a KubeAI Model with adapters, as KubeAI's hack/dev-models/vllm-with-adapters.yaml writes one
    (tmp_path / "model.yaml").write_text(KUBEAI)
    (d,) = _json(tmp_path / "model.yaml")["deployments"]
    assert d["model"] == "TinyLlama/TinyLlama-1.1B-Chat-v0.3" and d["plan"] is not None
    assert d["adapters"] == [
        {"name": "sql", "ref": "example-org/tinyllama-sql-lora"},
        {"name": "colors", "ref": "s3://example-bucket/adapters/tinyllama-colorist-lora"},
    ]
    (note,) = [n for n in d["plan"]["breakdown"]["notes"] if n.startswith("LoRA enabled")]
    # KubeAI adds --enable-lora; vLLM's defaults are named as defaults, and the cost is said to be unpriced
    assert "--max-loras 1 (vLLM default)" in note and "--max-lora-rank 16 (vLLM default)" in note
    assert "not priced" in note and "sql=example-org/tinyllama-sql-lora" in note


def test_vllm_lora_modules_both_spellings(tmp_path):
    toks = [
        Token(t, None)
        for t in [
            "--lora-modules",
            "sql=/adapters/sql",
            '{"name": "x", "path": "hf://a/b"}',
            "--max-loras",
            "4",
        ]
    ]
    assert [(n, r) for n, r, _ in vllm_lora_modules(toks)] == [("sql", "/adapters/sql"), ("x", "a/b")]
    (tmp_path / "d.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n      containers:\n"
        "      - name: vllm\n        image: vllm/vllm-openai:v0.10.0\n"
        "        args: [--model, meta-llama/Llama-3.2-1B-Instruct, --enable-lora, --max-loras, '4', --max-lora-rank,"
        " '64', --lora-modules, 'sql=/adapters/sql', 'chat=/adapters/chat', --max-model-len, '4096']\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (d,) = _json(tmp_path / "d.yaml")["deployments"]
    assert [a["name"] for a in d["adapters"]] == ["sql", "chat"]
    (note,) = d["plan"]["breakdown"]["notes"]
    assert "--max-loras 4 x --max-lora-rank 64" in note  # the stated values, not the defaults


def test_no_lora_no_note():
    assert lora.note({}) == "" and lora.note({"enable_lora": False}) == ""


def test_coverage_counts_the_adapter_as_an_adapter_of_its_base():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import model_coverage

    got = model_coverage._classify(
        ["jashing/tinyllama-colorist-lora", "SanctumAI/Llama-3.2-1B-Instruct-GGUF", "random/model"],
        {"jashing/tinyllama-colorist-lora": "TinyLlama/TinyLlama-1.1B-Chat-v0.3"},
    )
    assert got["adapter"] == [
        (
            "jashing/tinyllama-colorist-lora",
            "a LoRA adapter of TinyLlama/TinyLlama-1.1B-Chat-v0.3 (kvlint catalog)",
        )
    ]
    assert [i for i, _ in got["gguf"]] == ["SanctumAI/Llama-3.2-1B-Instruct-GGUF"]
    assert [i for i, _ in got["unresolved"]] == ["random/model"]  # a placeholder stays unresolved


def test_ray_serve_llm_lora_config_names_its_adapter_store(tmp_path):
    # an LLMConfig as Ray Serve LLM's docs and tests write one: vLLM's LoRA flags in engine_kwargs, the
    # adapter store in lora_config.dynamic_lora_loading_path
    (tmp_path / "llm.yaml").write_text(
        "model_loading_config:\n  model_id: meta-llama/Llama-2-7b-hf\nllm_engine: vLLM\n"
        "engine_kwargs:\n  max_model_len: 4096\n  enable_lora: true\n  max_loras: 2\naccelerator_type: A10G\n"
        "lora_config:\n  max_num_adapters_per_replica: 16\n  dynamic_lora_loading_path: s3://my/s3/path_here\n"
    )
    (d,) = _json(tmp_path / "llm.yaml")["deployments"]
    assert d["model"] == "meta-llama/Llama-2-7b-hf"
    assert d["adapters"] == [{"name": None, "ref": "s3://my/s3/path_here (adapters loaded on demand)"}]
    (note,) = [n for n in d["plan"]["breakdown"]["notes"] if "--max-loras" in n]
    assert "--max-loras 2 x --max-lora-rank 16 (vLLM default)" in note


def test_kserve_llm_inference_service_lora_adapters_and_max_rank(tmp_path):
    # spec.model.lora as kserve/kserve@aaac4e29 LoRASpec defines it: the controller adds --enable-lora and
    # --max-lora-rank from maxRank; --max-loras stays vLLM's default when maxAdapters is not set
    (tmp_path / "llmisvc.yaml").write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata:\n  name: llama-lora\nspec:\n"
        "  model:\n    uri: hf://meta-llama/Llama-3.1-8B-Instruct\n    name: meta-llama/Llama-3.1-8B-Instruct\n"
        "    lora:\n      maxRank: 64\n      adapters:\n      - name: sql\n        uri: hf://someone/llama-sql-lora\n"
        "  template:\n    containers:\n    - name: main\n      resources:\n        limits: {nvidia.com/gpu: '1'}\n"
        "    nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
    )
    (d,) = _json(tmp_path / "llmisvc.yaml")["deployments"]
    assert d["adapters"] == [{"name": "sql", "ref": "someone/llama-sql-lora"}]
    (note,) = [n for n in d["plan"]["breakdown"]["notes"] if "--max-loras" in n]  # + "vLLM version unknown"
    assert "--max-loras 1 (vLLM default) x --max-lora-rank 64 x" in note


def test_sglang_lora_paths_turn_lora_on_and_name_the_batch_reserve(tmp_path):
    # the launch line of SGLang's LoRA docs (docs.sglang.io advanced_features/lora: --lora-paths NAME=PATH)
    (tmp_path / "sg.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: sg}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n      containers:\n"
        "      - name: sglang\n        image: lmsysorg/sglang:v0.4.6\n        command: [python3, -m, sglang.launch_server]\n"
        "        args: [--model-path, meta-llama/Llama-3.1-8B-Instruct, --lora-paths,"
        " lora0=algoprog/fact-generation-llama-3.1-8b-instruct-lora, /adapters/plain, --context-length, '8192']\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (d,) = _json(tmp_path / "sg.yaml")["deployments"]
    assert d["adapters"] == [
        {"name": "lora0", "ref": "algoprog/fact-generation-llama-3.1-8b-instruct-lora"},
        {"name": None, "ref": "/adapters/plain"},
    ]
    (note,) = d["plan"]["breakdown"]["notes"][-1:]
    assert "--max-loras-per-batch 8 (SGLang default)" in note and "not priced" in note


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("'64'", "'64' is not a whole number"),
        ("0", "0 is below 1"),
        ("[64]", "(a list or map) is not"),
        ("2.5", "2.5 is not"),
    ],
)
def test_kserve_lora_max_rank_of_the_wrong_type_is_refused_not_replaced_by_the_default(
    tmp_path, written, said
):
    # LoRASpec.MaxRank is *int32 with Minimum=1 (kserve@aaac4e29): the API server refuses a string, a list,
    # a fraction or 0, so kvlint says so at the value instead of naming vLLM's default rank 16 in its place
    (tmp_path / "llmisvc.yaml").write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata:\n  name: llama-lora\nspec:\n"
        "  model:\n    uri: hf://meta-llama/Llama-3.1-8B-Instruct\n    name: meta-llama/Llama-3.1-8B-Instruct\n"
        f"    lora:\n      maxRank: {written}\n"
        "  template:\n    containers:\n    - name: main\n      resources:\n        limits: {nvidia.com/gpu: '1'}\n"
        "    nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
    )
    out = _json(tmp_path / "llmisvc.yaml")
    (bad,) = [f for f in out["findings"] if f["rule"] == "KV005"]
    assert f"spec.model.lora.maxRank {said}" in bad["message"] and bad["line"] == 10
    (d,) = out["deployments"]
    notes = (d["plan"] or {}).get("breakdown", {}).get("notes", []) if d["plan"] else []
    assert not any("--max-lora-rank 16 (vLLM default)" in n for n in notes)


def test_lora_syncer_sidecar_configmap_names_the_adapters_it_loads():
    # production-stack's Gateway API Inference Extension sample (corpus excerpt): a lora-syncer sidecar mounts a
    # ConfigMap whose vLLMLoRAConfig.ensureExist.models lists the adapters it loads into the vLLM beside it
    path = carried(
        "vllm-project__production-stack__src__gateway_inference_extension__configs__vllm__gpu-deployment.yaml"
    )
    (d,) = _json(path)["deployments"]
    assert d["model"] == "meta-llama/Llama-3.2-1B-Instruct"
    assert d["adapters"] == [{"name": "legogpt", "ref": "AvaLovelace/LegoGPT"}]
