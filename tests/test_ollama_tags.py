"""Ollama library tags resolved to the model and GGUF file type they pull (kvlint/engines/llamacpp/ollama_tags.py,
data/ollama_tags.json), and KubeAI Models that serve one (`url: ollama://TAG`, `engine: OLlama`) planned as
Ollama. A tag the table does not hold is an unknown with a KV004 that says so: never a guess."""

from __future__ import annotations

import pytest
from conftest import lint

from kvlint.catalog import gguf
from kvlint.catalog import models as catalog
from kvlint.engines.llamacpp import ollama_tags

MODEL = """apiVersion: kubeai.org/v1
kind: Model
metadata: {{name: m}}
spec:
  features: [TextGeneration]
  url: ollama://{tag}
  engine: OLlama
  resourceProfile: {profile}
"""


def _model(tag: str, profile: str = "nvidia-gpu-h100:1"):
    return lint(MODEL.format(tag=tag, profile=profile))


def _pulls(ref: str) -> tuple[str, str]:
    tag, why = ollama_tags.resolve(ref)
    assert tag is not None, why
    return tag.base, tag.file_type


def test_a_name_alone_is_its_latest_tag():
    assert _pulls("gemma2") == _pulls("gemma2:latest") == _pulls("ollama://gemma2:latest")


def test_a_size_tag_is_the_explicit_tag_of_the_same_blob():
    assert _pulls("gemma2:27b") == _pulls("gemma2:27b-instruct-q4_0") == ("google/gemma-2-27b-it", "q4_0")
    assert _pulls("phi4") == ("microsoft/phi-4", "q4_k_m")


def test_an_explicit_type_and_flavour_are_read_from_the_tag():
    assert _pulls("gemma2:27b-instruct-q8_0") == ("google/gemma-2-27b-it", "q8_0")
    assert _pulls("gemma2:27b-text-q4_0") == ("google/gemma-2-27b", "q4_0")  # the pretrained model
    assert _pulls("llama3.1:8b-instruct-fp16") == ("meta-llama/Llama-3.1-8B-Instruct", "f16")


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("gemma2x:27b", "not a model of the Ollama library"),  # a look-alike name
        ("gemma-2:27b", "not a model of the Ollama library"),
        ("someone/gemma2:27b", "a user's model"),  # a user's namespace, not the library
        ("gemma2:13b", "not a tag kvlint's table holds"),  # a size the library does not list
        ("gemma2:27b-instruct-q9_0", "not a tag kvlint's table holds"),  # a type it does not list
        ("gemma2:27b-chat", "not a tag kvlint's table holds"),
    ],
)
def test_what_the_table_does_not_hold_is_unknown_not_guessed(ref, why):
    tag, said = ollama_tags.resolve(ref)
    assert tag is None and why in said


def test_every_row_names_a_catalogued_model_and_a_type_kvlint_prices():
    for name, fam in ollama_tags._table()["families"].items():
        for flavour, base in fam["flavours"].items():
            assert catalog.resolve(base).arch is not None, base
            for q in fam["quants"][flavour]:
                _quant, why = gguf.quant(ollama_tags._file_type(q))
                assert why == "", f"{name}:{flavour}-{q}: {why}"
        for alias, row in fam["aliases"].items():
            assert row["evidence"], f"{name}:{alias} has no source"
            assert ollama_tags.resolve(f"{name}:{alias}")[0] is not None


# the blob sizes the library lists for these tags (D3rhami/ollama_gallery@5d4b65615 data/tags/<name>.json,
# ollama.com/library/<name>/tags, in GB as the page rounds them)
LIBRARY_GB = {"gemma2:27b": 16, "phi4": 9.1, "llama3.3:70b": 43, "qwen2.5:7b": 4.7, "llama3.2:1b": 1.3,
              "granite3.1-dense": 5.0, "llama2": 3.8, "llama3.1:8b": 4.9}  # fmt: skip


@pytest.mark.parametrize("tag", sorted(LIBRARY_GB))
def test_a_kubeai_ollama_model_is_planned_at_the_gguf_its_tag_pulls(tag):
    (r,) = _model(tag).deployments
    assert r.plan is not None and r.plan.weights_source.startswith("GGUF Q")
    # the GGUF's tensors by role come within 3 % of the blob the library lists (rounded to 2-3 digits)
    assert abs(r.plan.weights_total / (LIBRARY_GB[tag] * 1e9) - 1) < 0.03


def test_an_unknown_tag_is_a_kv004_that_names_it_and_nothing_is_planned():
    result = _model("gemma2:13b", "nvidia-gpu-l4:1")
    (kv004,) = [f for f in result.findings if f.rule == "KV004"]
    assert "'gemma2:13b'" in kv004.message and "does not resolve to its GGUF" in kv004.message
    assert result.deployments[0].plan is None


def test_an_ollama_model_on_cpus_is_resolved_and_said_to_run_on_cpus():
    result = _model("qwen2.5:7b", "cpu:2")
    (kv004,) = [f for f in result.findings if f.rule == "KV004"]
    assert "runs on CPUs" in kv004.message
    assert result.deployments[0].deployment.model.value == "Qwen/Qwen2.5-7B-Instruct"


def test_layers_ollama_cannot_fit_on_the_gpu_are_a_warning_with_the_figure():
    (kv004,) = [f for f in _model("llama3.3:70b", "nvidia-gpu-l4:1").findings if f.rule == "KV004"]
    placed = int(kv004.message.split("loads ")[1].split(" of ")[0])
    assert kv004.severity.name == "WARNING" and 0 < placed < 80 and "of 80 layers on the GPU" in kv004.message
    # the same model on a GH200, which holds every layer and its cache at the 131,072-token training context
    assert not [f for f in _model("llama3.3:70b", "nvidia-gpu-gh200:1").findings if f.rule == "KV004"]


def test_a_context_beyond_the_model_is_cut_to_its_training_context():
    """Ollama cuts num_ctx to the GGUF's context_length before sizing the cells (llm/server.go:166-169 at
    v0.15.5): OLLAMA_CONTEXT_LENGTH 65536 on Gemma 2, trained on 8,192 positions, gets 8,192 cells."""
    text = MODEL.format(tag="gemma2:27b", profile="nvidia-gpu-h100:1")
    (r,) = lint(text + "  env:\n    OLLAMA_CONTEXT_LENGTH: '65536'\n").deployments
    assert r.plan.kv_tokens == r.model.max_positions == 8192
