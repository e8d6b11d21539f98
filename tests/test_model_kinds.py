"""Model ids that are not plain text-generation checkpoints (issue #11): GGUF conversions, speech and
image models, encoder-only models. Each is said for what it is (KV004 at the model), never as an
unknown model (KV003), and nothing is priced that the name does not state."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, carried

from kvlint.catalog import gguf, model_kinds, models


def _lint(tmp_path: Path, model: str) -> dict:
    (tmp_path / "d.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n      containers:\n"
        f"      - name: vllm\n        image: vllm/vllm-openai:v0.10.0\n        args: [--model, {model}]\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    cmd = [sys.executable, "-m", "kvlint", "--isolated", "--format", "json", str(tmp_path / "d.yaml")]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    return json.loads(out.stdout)


# SYSTRAN/faster-whisper@00a5b26b faster_whisper/utils.py _MODELS (size -> repository), and the
# parameter counts of openai/whisper@b9f17e1f README.md for the sizes it lists.
@pytest.mark.parametrize(
    ("ident", "params_m"),
    [
        ("Systran/faster-whisper-medium.en", 769),  # the KubeAI FasterWhisper model in the corpus
        ("Systran/faster-whisper-tiny", 39),
        ("Systran/faster-whisper-large-v3", 1550),
        ("Systran/faster-distil-whisper-large-v3", None),  # distilled: the README gives no count
        ("mobiuslabsgmbh/faster-whisper-large-v3-turbo", None),  # turbo: no count claimed
    ],
)
def test_faster_whisper_repositories_are_speech_models(ident, params_m):
    kind = model_kinds.classify(ident)
    assert kind is not None and "speech-to-text" in kind.kind and kind.params_m == params_m
    res = models.resolve(ident)
    assert res.arch is None and res.kind == kind.kind and "not a text-generation checkpoint" in res.how


@pytest.mark.parametrize(
    "ident",
    [
        "ivrit-ai/faster-whisper-v2-d4",  # a Hebrew fine-tune: no openai/whisper-v2-d4 exists
        "jlondonobo/faster-whisper-medium-pt",  # a Portuguese fine-tune of some medium checkpoint
        "Infomaniak-AI/faster-whisper-large-v3-turbo-french",
    ],
)
def test_a_faster_whisper_name_outside_systrans_table_names_no_invented_openai_base(ident):
    # only the names of faster-whisper's _MODELS table are SYSTRAN's conversions of an openai/whisper
    # checkpoint; a community conversion is still a CTranslate2 Whisper, but its base (and size) is not stated
    kind = model_kinds.classify(ident)
    assert kind is not None and "speech-to-text" in kind.kind
    assert "openai/whisper-" not in kind.what and kind.params_m is None and "not stated" in kind.what


def test_stable_diffusion_is_an_image_pipeline_with_its_published_unet_size():
    # the Ray Serve stable-diffusion blueprint in the corpus (ai-on-eks) names stabilityai/stable-diffusion-2-1
    res = models.resolve("stabilityai/stable-diffusion-2-1")
    assert res.arch is None and "text-to-image" in res.kind and "865M-parameter UNet" in res.how
    # an LLM whose name merely contains a kind's word is not classified
    assert model_kinds.classify("openai/whisper-large-v3") is None  # transformers Whisper: vLLM serves it
    assert model_kinds.classify("meta-llama/Llama-3.1-8B-Instruct") is None


def test_kinds_and_encoder_only_models_are_kv004_at_the_model_not_kv003(tmp_path):
    for model, said in (
        ("Systran/faster-whisper-medium.en", "speech-to-text"),
        ("stabilityai/stable-diffusion-2-1", "text-to-image"),
        ("BAAI/bge-m3", "encoder-only"),  # catalogued, keeps no KV cache
    ):
        report = _lint(tmp_path, model)
        codes = [(f["rule"], f["severity"], f["line"]) for f in report["findings"]]
        assert codes == [("KV004", "info", 11)], (model, codes)
        assert (
            said in report["findings"][0]["message"]
            and "capacity not checked" in report["findings"][0]["message"]
        )


def test_a_gguf_repository_is_matched_to_its_base_but_not_priced(tmp_path):
    res = models.resolve("SanctumAI/Llama-3.2-1B-Instruct-GGUF")  # corpus: ai-on-eks llama.cpp values
    base = models.resolve("meta-llama/Llama-3.2-1B-Instruct").arch
    assert res.arch is not None and base is not None and res.arch.kv_heads == base.kv_heads
    assert "quant type is chosen by the file" in res.unpriced and "GGUF name" in res.derived
    report = _lint(tmp_path, "SanctumAI/Llama-3.2-1B-Instruct-GGUF")
    (finding,) = report["findings"]
    assert finding["rule"] == "KV004" and "weights are not priced" in finding["message"]
    assert report["deployments"][0].get("plan") is None  # no weights: nothing planned


def test_a_gguf_file_states_its_type_and_is_planned_at_its_block_size(tmp_path):
    report = _lint(tmp_path, "/models/Llama-3.2-1B-Instruct-Q8_0.gguf")
    plan = report["deployments"][0]["plan"]
    base = models.resolve("meta-llama/Llama-3.2-1B-Instruct").arch
    assert base is not None
    weights = next(t for t in plan["breakdown"]["terms"] if t["label"] == "weights")
    assert "GGUF Q8_0" in weights["note"] and "8.5 bits per weight" in weights["note"]
    # linear layers at 8.5 bits instead of 16: well under the 16-bit model, over half of it
    full = base.params * 2
    assert full / 2 < weights["bytes"] < full
    (kv007,) = [f for f in report["findings"] if f["rule"] == "KV007"]
    assert "models pull" not in kv007["fix"]  # a local file is not a Hub id: nothing to pull


def test_ggml_block_sizes_match_the_bits_llama_cpp_states():
    # ggml-common.h comments: "Effectively 4.5 bits per weight" (q4_K), 6.5625 (q6_K), 2.625 (q2_K)
    for ggml_type, bits in (
        ("Q4_K", 4.5),
        ("Q6_K", 6.5625),
        ("Q2_K", 2.625),
        ("Q5_K_M", 5.5),
        ("IQ4_XS", 4.25),
    ):
        quant, why = gguf.quant(ggml_type)
        assert why == "" and quant is not None and quant.bits == bits, ggml_type


KUBEAI_MODEL = """apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: {name}
spec:
  features: [{feature}]
  url: hf://{model}
  engine: {engine}
  minReplicas: 0
  resourceProfile: cpu:1
"""


def test_kubeai_speech_and_embedding_engines_are_reported_not_silent(tmp_path):
    # as KubeAI's own model catalog (manifests/models/) declares them: a CPU profile, an engine kvlint does
    # not model; the real files are pinned in tests/data/corpus_findings.yaml
    for feature, model, engine in (
        ("SpeechToText", "Systran/faster-whisper-small", "FasterWhisper"),
        ("TextEmbedding", "BAAI/bge-base-en-v1.5", "Infinity"),
    ):
        path = tmp_path / f"{engine}.yaml"
        path.write_text(KUBEAI_MODEL.format(name=engine.lower(), feature=feature, model=model, engine=engine))
        cmd = [sys.executable, "-m", "kvlint", "--isolated", "--format", "json", str(path)]
        report = json.loads(subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False).stdout)
        (finding,) = report["findings"]  # one KV004 per workload, not one for the engine and one for the CPU
        assert finding["rule"] == "KV004" and f"KubeAI engine {engine}" in finding["message"]


def test_llmaz_openmodel_filename_names_the_gguf_file_the_engine_gets(tmp_path):
    # llmaz's speculative-decoding example (corpus excerpt) claims OpenModels with modelHub.filename; its loader
    # fetches that one file and the engine is given it (llmaz modelhub.go ModelPath). Here on vLLM.
    src = carried("InftyAI__llmaz__docs__examples__speculative-decoding__llamacpp__playground.yaml")
    (tmp_path / "p.yaml").write_text(src.read_text().replace("backendName: llamacpp", "backendName: vllm"))
    cmd = [
        sys.executable,
        "-m",
        "kvlint",
        "--isolated",
        "--gpu",
        "L4",
        "--format",
        "json",
        str(tmp_path / "p.yaml"),
    ]
    report = json.loads(subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False).stdout)
    (d,) = report["deployments"]
    assert d["model"] == "TheBloke/Llama-2-7B-GGUF/llama-2-7b.Q8_0.gguf"
    assert "GGUF Q8_0 weights (GGUF file)" in d["model_resolution"] and d["plan"] is not None


def test_kvlint_plan_says_why_it_cannot_plan_a_known_but_unpriced_model():
    for model, said in (
        ("SanctumAI/Llama-3.2-1B-Instruct-GGUF", "quant type is chosen by the file"),
        ("Systran/faster-whisper-medium.en", "speech-to-text"),
    ):
        cmd = [sys.executable, "-m", "kvlint", "plan", model, "--gpu", "L4"]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
        assert out.returncode == 2 and said in out.stderr + out.stdout, (model, out.stderr)
