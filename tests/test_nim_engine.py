"""NVIDIA NIM (kvlint.engines.nim): a NIM image, a NIMService or the nim-llm chart's values is a NIM; the model
comes from the image through kvlint's table of NIM images (never guessed from the name); a vLLM profile is
planned with the settings NIM passes vLLM, and what cannot be known offline is one KV004 saying what."""

from __future__ import annotations

import pytest
from conftest import gpu_pod, lint

from kvlint.engines.nim import launch, profiles

IMAGE = "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3"


def _one(text: str):
    result = lint(text)
    (r,) = result.deployments
    return r, result.findings


def _not_modelled(findings) -> list[str]:
    return [f.message for f in findings if f.rule == "KV004"]


def test_a_vllm_profile_is_planned_with_the_values_nim_passes_vllm():
    env = {"NIM_MODEL_PROFILE": "vllm-bf16-tp2", "NIM_MAX_MODEL_LEN": "16384"}
    r, findings = _one(gpu_pod(IMAGE, [], env, gpus=2))
    assert r.deployment.engine.value == "nim"
    assert r.model is not None and r.model.id == "meta-llama/Llama-3.1-8B-Instruct"
    assert r.plan is not None and r.settings.engine == "nim"
    assert r.settings.tp == 2 and r.plan.max_model_len == 16384
    assert not _not_modelled(findings)


def test_a_nim_variable_wins_over_the_profile_tag():
    env = {"NIM_MODEL_PROFILE": "vllm-bf16-tp2", "NIM_TENSOR_PARALLEL_SIZE": "1"}
    r, _ = _one(gpu_pod(IMAGE, [], env, gpus=1))
    assert r.settings.tp == 1


def test_an_fp8_profile_plans_one_byte_weights():
    bf16, _ = _one(gpu_pod(IMAGE, [], {"NIM_MODEL_PROFILE": "vllm-bf16-tp1"}))
    fp8, _ = _one(gpu_pod(IMAGE, [], {"NIM_MODEL_PROFILE": "vllm-fp8-tp1"}))
    assert fp8.plan.weights_per_gpu < 0.6 * bf16.plan.weights_per_gpu


def test_an_image_the_table_does_not_list_is_a_kv004_not_a_plan():
    # a name one character from a listed image: no guess from the name
    r, findings = _one(gpu_pod("nvcr.io/nim/meta/llama-3.1-8b-instruct-v2:1.3.3", [], {}))
    assert r.plan is None and r.model is None
    (msg,) = _not_modelled(findings)
    assert "does not list meta/llama-3.1-8b-instruct-v2" in msg


# a release kvlint's profile table has no list for (it lists 1.3.3 and 1.13.1 of this image)
UNLISTED = "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.1.0"


@pytest.mark.parametrize(
    ("profile", "said"),
    [
        ("tensorrt_llm-h100-int4_wo-tp1-throughput", "runs TensorRT-LLM at precision int4_wo"),
        ("751382df4272eafc83f541f364d61b35aed9cce8c7b0c869269cea5a366cd08c", "is a profile id"),
        (None, "has no list for meta/llama-3.1-8b-instruct:1.1.0"),
    ],
)
def test_what_cannot_be_known_offline_is_said_once(profile, said):
    env = {"NIM_MODEL_PROFILE": profile} if profile else {}
    r, findings = _one(gpu_pod(UNLISTED, [], env))
    assert r.plan is None
    (msg,) = _not_modelled(findings)
    assert said in msg
    assert not [f for f in findings if f.rule == "KV201"]  # no idle-GPU guess from a parallelism not known


def test_the_multi_llm_nim_serves_the_model_its_variable_names():
    env = {"NIM_MODEL_NAME": "hf://meta-llama/Llama-3.2-1B-Instruct", "NIM_MODEL_PROFILE": "vllm-bf16-tp1"}
    r, _ = _one(gpu_pod("nvcr.io/nim/nvidia/llm-nim:1.14", [], env))
    assert r.model is not None and r.model.id == "meta-llama/Llama-3.2-1B-Instruct" and r.plan is not None


NIMSERVICE = """apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: n}
spec:
  image: {repository: nvcr.io/nim/meta/llama-3.1-8b-instruct, tag: "1.3.3"}
  env:
  - {name: NIM_MODEL_PROFILE, value: vllm-bf16-tp1}
  - {name: NIM_MAX_MODEL_LEN, value: "8192"}
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
  resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_nimservice_reads_its_image_tag_and_env():
    r, _ = _one(NIMSERVICE)
    assert str(r.deployment.image.value) == "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3"
    assert r.plan is not None and r.plan.max_model_len == 8192 and r.gpu.name.startswith("NVIDIA L4")


CHART = """image: {repository: nvcr.io/nim/meta/llama3-8b-instruct, tag: 1.0.3}
model: {ngcAPISecret: ngc-api}
env:
- {name: NIM_MODEL_PROFILE, value: vllm-fp16-tp1}
- {name: NIM_MAX_MODEL_LEN, value: "4096"}
nodeSelector: {nvidia.com/gpu.product: NVIDIA-A10G}
"""


def test_the_nim_llm_chart_values_read_image_env_and_the_default_gpu():
    r, _ = _one(CHART)
    assert r.model.id == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert r.plan is not None and r.plan.max_model_len == 4096 and r.deployment.gpus.value == 1


def test_a_chart_value_left_out_is_the_nim_llm_chart_s_image_and_tag():
    """nim-llm 1.1.2: image.repository nvcr.io/nim/meta/llama3-8b-instruct, the tag its appVersion 1.0.3."""
    no_tag, _ = _one(CHART.replace(", tag: 1.0.3", ""))
    image = no_tag.deployment.image
    assert image.value == "nvcr.io/nim/meta/llama3-8b-instruct:1.0.3" and image.origin == "default"
    assert "image.tag" in image.note and "image.repository" not in image.note
    assert no_tag.plan is not None and no_tag.plan.max_model_len == 4096  # 1.0.3's list names vllm-fp16-tp1
    neither, _ = _one(
        CHART.replace("image: {repository: nvcr.io/nim/meta/llama3-8b-instruct, tag: 1.0.3}\n", "")
    )
    assert neither.deployment.image.value == image.value and "image.repository and image.tag" in (
        neither.deployment.image.note
    )


def test_values_beside_another_chart_s_chart_yaml_are_not_nim_llm_values(tmp_path):
    from kvlint.run.lint import read_and_lint
    from kvlint.run.settings import Settings

    (tmp_path / "values.yaml").write_text(CHART)
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: nim-llm\nversion: 1.1.2\n")
    own = read_and_lint(str(tmp_path / "values.yaml"), Settings(), "values.yaml")
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: ngc-cache\nversion: 0.1.0\n")
    other = read_and_lint(str(tmp_path / "values.yaml"), Settings(), "values.yaml")
    assert not isinstance(own, str) and not isinstance(other, str)
    assert [r.deployment.engine.note for r in own.deployments] == ["nim-llm Helm values"]
    assert "nim-llm Helm values" not in [r.deployment.engine.note for r in other.deployments]


def test_image_names_and_profile_names_as_nim_writes_them():
    assert launch.image_name("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3") == "meta/llama-3.1-8b-instruct"
    assert (
        launch.image_name("nvcr.io/nim/meta/llama-3.1-8b-instruct@sha256:ab") == "meta/llama-3.1-8b-instruct"
    )
    assert launch.image_name("vllm/vllm-openai:v0.10.0") is None
    p = profiles.parse("tensorrt_llm-trtllm_buildable-bf16-tp8-pp2")
    assert p is not None and (p.backend, p.precision, p.tp, p.pp) == ("tensorrt_llm", "bf16", 8, 2)
    p = profiles.parse("tensorrt_llm-h100-fp8-tp2-latency")
    assert p is not None and (p.gpu, p.precision, p.tp, p.pp) == ("h100", "fp8", 2, 1)
    assert profiles.parse("vllm-bf16-tp2-pp1-lora").tp == 2
    assert profiles.parse("8835c31752fbc67ef658b20a9f78e056914fdef0660206d82f252d62fd96064d") is None


@pytest.mark.parametrize(
    "args",
    [
        ["download-to-cache"],
        ["download-to-cache", "--profile", "tensorrt_llm-l40s-bf16-tp2-throughput"],
        ["list-model-profiles"],
        ["/usr/local/bin/create-model-store", "--profile", "vllm-bf16-tp1", "--model-store", "/s"],
    ],
)
def test_a_nim_utility_serves_nothing_so_no_nim_server_is_planned(args):
    """NIM's utilities (docs.nvidia.com/nim/large-language-models/1.0.0/utilities.html) print or download a
    profile and exit: a Job running one is no server (and a profile name after it names no engine)."""
    result = lint(gpu_pod(IMAGE, args))
    assert not result.deployments
    (kv004,) = result.findings
    assert "runs nothing kvlint reads as an LLM engine" in kv004.message


def test_a_tensorrt_llm_profile_does_not_take_the_vllm_options_of_nim_passthrough_args():
    """NIM_PASSTHROUGH_ARGS is a vLLM command line (docs.nvidia.com/nim/large-language-models/2.0.0/reference/
    advanced-configuration.html); the TensorRT-LLM profile NIM picks on an H100 does not read it."""
    env = {"NIM_PASSTHROUGH_ARGS": "--max-num-seqs 512 --gpu-memory-utilization 0.5 --tensor-parallel-size 2"}
    passed, _ = _one(gpu_pod(IMAGE, [], env))
    alone, _ = _one(gpu_pod(IMAGE, [], {}))
    assert passed.settings.extra["nim_backend"] == "trtllm"
    assert passed.settings.max_num_seqs == alone.settings.max_num_seqs != 512
    assert passed.plan.kv_tokens == alone.plan.kv_tokens
    assert passed.settings.tp == alone.settings.tp == 1  # the profile's TP, not the one passed to vLLM
    assert (
        "what it sets (tensor_parallel 2, max_sequences 512, gpu_memory_utilization 0.5) is not"
        in " ".join(passed.plan.notes)
    )
    vllm, _ = _one(gpu_pod(IMAGE, [], {**env, "NIM_MODEL_PROFILE": "vllm-bf16-tp1"}))
    assert vllm.settings.max_num_seqs == 512 and vllm.settings.tp == 2  # a vLLM profile does
