"""Ollama Operator `Model` objects (kvlint/extract/kinds/ollama_operator.py): the operator's server container,
ollama/ollama serve with `spec.extraEnv` and `spec.resources`, in `spec.podTemplate`, holding the model
`spec.image` names (nekomeowww/ollama-operator@v0.10.10 pkg/model/pod.go)."""

from __future__ import annotations

from conftest import lint

MODEL = """apiVersion: ollama.ayaka.io/v1
kind: Model
metadata: {{name: m}}
spec:
  image: {model}
{more}"""
L4 = "  podTemplate:\n    spec:\n      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
ONE_GPU = "  resources:\n    limits: {nvidia.com/gpu: 1}\n"


def _one(model: str, more: str = ""):
    result = lint(MODEL.format(model=model, more=more))
    (r,) = result.deployments
    return r, result


def test_the_model_is_the_spec_image_served_by_ollama():
    r, _ = _one("llama3.1:8b", ONE_GPU + L4)
    d = r.deployment
    assert "Llama-3.1-8B" in str(d.model.value)  # the Ollama tag, resolved to its GGUF's model
    assert str(d.image.value) == "ollama/ollama"
    assert d.engine.note.startswith("an Ollama Operator Model")
    assert d.engine_version is None  # the operator's image has no tag
    assert r.in_force.gpu.value == "l4" and d.gpus_per_pod.value == 1


def test_extra_env_is_the_servers_environment():
    env = '  extraEnv:\n    - {name: OLLAMA_CONTEXT_LENGTH, value: "2048"}\n'
    short, _ = _one("llama3.1:8b", ONE_GPU + L4 + env)
    full, _ = _one("llama3.1:8b", ONE_GPU + L4)
    assert short.settings.max_model_len == 2048
    assert short.settings.max_model_len < full.settings.max_model_len


def test_a_model_too_large_for_the_gpu_is_said():
    _, result = _one("llama3:70b", ONE_GPU + L4)
    (f,) = result.findings
    assert f.rule == "KV004" and "layers on the GPU" in f.message and "on the CPU" in f.message


def test_a_model_object_without_a_model_is_no_workload():
    assert not lint(MODEL.format(model='""', more="")).deployments
