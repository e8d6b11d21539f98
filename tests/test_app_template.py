"""bjw-s's app-template chart values (kvlint/extract/kinds/app_template.py): each controller's containers are
read as the pod the common library renders (charts/library/common/templates @common-4.1.1)."""

from __future__ import annotations

from conftest import ROOT, lint, rules_of

FIXTURES = ROOT / "fixtures" / "stacks" / "app-template"

VLLM = """controllers:
  vllm:
{controller}    containers:
      app:
        image:
          repository: vllm/vllm-openai
          tag: v0.10.1
        args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "8192", --max-num-seqs, "8"]
{env}        resources:
          limits:
            nvidia.com/gpu: 2
{top}"""


def _values(controller: str = "", env: str = "", top: str = ""):
    return lint(VLLM.format(controller=controller, env=env, top=top), "values.yaml")


def test_each_controller_is_a_workload_named_after_it():
    result = lint((FIXTURES / "good-values-llama-cpp-two-controllers.yaml").read_text(), "values.yaml")
    (r,) = result.deployments  # the web UI runs no engine
    d = r.deployment
    assert (d.kind, d.name, d.engine_name) == ("values", "llama", "llamacpp")
    assert str(d.image.value) == "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500"
    assert r.in_force.gpu.value == "rtx-4090"  # the controller's nodeSelector over defaultPodOptions'
    assert d.has_shm is True  # the emptyDir advancedMounts puts at /dev/shm in this container


DEFAULT_GPU = "defaultPodOptions:\n  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-L4\n"
OWN_ARCH = "    pod:\n      nodeSelector:\n        kubernetes.io/arch: amd64\n"


def test_a_controllers_pod_option_replaces_the_default_unless_the_strategy_merges():
    (replaced,) = _values(OWN_ARCH, top=DEFAULT_GPU).deployments
    assert replaced.in_force.gpu is None
    (merged,) = _values(OWN_ARCH, top=DEFAULT_GPU + "defaultPodOptionsStrategy: merge\n").deployments
    assert merged.in_force.gpu.value == "l4"


def test_the_env_map_reaches_the_container():
    env = '        env:\n          CUDA_VISIBLE_DEVICES: "0"\n          HF_TOKEN:\n            secretKeyRef: {name: hf, key: t}\n'
    result = _values(env=env, top=DEFAULT_GPU)
    (f,) = [f for f in result.findings if f.rule == "KV201"]
    assert "CUDA_VISIBLE_DEVICES=0 shows the engine 1 of the 2 GPUs" in f.message
    assert (f.where.line, f.where.column) == (10, 33)  # at the value in the map


def test_what_the_chart_does_not_render_is_not_read():
    assert not _values("    enabled: false\n").deployments
    assert not _values("    type: cronjob\n").deployments
    untagged = VLLM.format(controller="", env="", top="").replace("          tag: v0.10.1\n", "")
    assert not lint(untagged, "values.yaml").deployments  # "No image tag specified for container"


def test_an_argo_cd_application_hands_its_values_to_app_template():
    text = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: llm}
spec:
  source:
    repoURL: https://bjw-s-labs.github.io/helm-charts
    chart: app-template
    targetRevision: 4.1.1
    helm:
      valuesObject:
        defaultPodOptions:
          nodeSelector: {nvidia.com/gpu.product: NVIDIA-GeForce-RTX-4090}
        controllers:
          main:
            containers:
              main:
                image: {repository: vllm/vllm-openai, tag: v0.10.1}
                args: [--model, Qwen/Qwen2.5-14B-Instruct]
                resources: {limits: {nvidia.com/gpu: 1}}
"""
    result = lint(text)
    assert "KV101" in rules_of(result)
    (r,) = result.deployments
    assert r.deployment.label() == "Application/llm/main"
