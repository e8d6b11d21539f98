"""An engine is recognised by what runs (its program, a start script, its options), not by its name inside
an image's name: a proxy or a client named after vLLM serves no model."""

from __future__ import annotations

from conftest import carried, lint

NEURON = (
    "awslabs__ai-on-eks__blueprints__inference__vllm-llama3.1-405b-trn1__llama3-405b-vllm-lws-deployment.yaml"
)


def _pod(image: str, body: str) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        f"      containers:\n        - name: c\n          image: {image}\n{body}"
    )


def test_a_proxy_image_named_after_vllm_running_nginx_is_no_deployment():
    text = _pod(
        "registry.example.com/team/my-vllm-proxy:1.2.0", '          command: ["nginx", "-g", "daemon off;"]\n'
    )
    assert lint(text).deployments == []


def test_a_client_image_named_after_vllm_with_nothing_to_run_is_no_deployment():
    text = _pod(
        "ghcr.io/example/open-webui-vllm:0.3",
        '          env: [{name: OPENAI_API_BASE_URL, value: "http://vllm:8000/v1"}]\n',
    )
    assert lint(text).deployments == []


def test_the_same_images_running_vllm_options_are_vllm():
    """A build named otherwise whose command line holds vLLM's options is vLLM (its entrypoint)."""
    text = _pod("ghcr.io/example/open-webui-vllm:0.3", '          args: ["--model", "Qwen/Qwen3-8B"]\n')
    (r,) = lint(text).deployments
    assert r.deployment.engine.value == "vllm" and r.deployment.model.value == "Qwen/Qwen3-8B"


def test_vllm_builds_with_nothing_on_the_command_line_stay_vllm():
    for image in (
        "vllm/vllm-openai:v0.10.1",
        "rocm/vllm:latest",
        "opea/vllm:latest",
        "quay.io/x/vllm-openai-ubi9:0.4",
    ):
        (r,) = lint(_pod(image, "")).deployments
        assert r.deployment.engine.value == "vllm", image


def test_a_start_script_that_names_vllm_in_an_image_holding_the_word_is_vllm():
    """awslabs/ai-on-eks' Llama 3.1 405B on trn1: /usr/local/bin/run.sh in a Neuron build of vLLM."""
    path = carried(NEURON)
    (r, *_) = lint(path.read_text(encoding="utf-8"), str(path)).deployments
    assert r.deployment.engine.value == "vllm"
