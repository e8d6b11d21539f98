"""The multi-LLM NIM (kvlint.engines.nim.generic): nvcr.io/nim/nvidia/llm-nim serves the checkpoint NIM_MODEL_NAME
names through a generic profile it generates at start-up; kvlint plans the vLLM one at the checkpoint's own
precision, under the NIM variables the file sets, and names that assumption in the plan."""

from __future__ import annotations

import pytest
from conftest import gpu_pod
from test_nim_engine import _not_modelled, _one

MULTI = "nvcr.io/nim/nvidia/llm-nim:1.14"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def test_the_multi_llm_nim_is_planned_as_vllm_runs_the_checkpoint():
    env = {"NIM_MODEL_NAME": f"hf://{MODEL}", "NIM_TENSOR_PARALLEL_SIZE": "2", "NIM_MAX_MODEL_LEN": "32768"}
    nim, findings = _one(gpu_pod(MULTI, [], env, gpus=2))
    args = ["--model", MODEL, "--tensor-parallel-size", "2", "--max-model-len", "32768"]
    vllm, _ = _one(gpu_pod("vllm/vllm-openai", args, gpus=2))
    assert not _not_modelled(findings)
    assert nim.settings.engine == "nim" and nim.settings.extra["nim_backend"] == "vllm"
    # the same engine run: vLLM at the checkpoint's dtype with the TP and length NIM's variables pass it
    assert (nim.settings.tp, nim.plan.max_model_len) == (2, 32768)
    assert nim.plan.weights_per_gpu == vllm.plan.weights_per_gpu
    assert nim.plan.kv_tokens == vllm.plan.kv_tokens
    (says,) = [n for n in nim.plan.notes if n.startswith("NIM profile")]
    assert says.startswith("NIM profile vllm-bf16-tp2-pp1 ") and "kvlint plans the vLLM one" in says


def test_without_a_tp_each_generic_profile_the_gpus_admit_is_planned():
    r, findings = _one(gpu_pod(MULTI, [], {"NIM_MODEL_NAME": f"hf://{MODEL}"}, gpus=4))
    assert not _not_modelled(findings)
    assert r.settings.tp == 4  # kvlint's default: the profile that uses the most of the pod's GPUs
    (says,) = [n for n in r.plan.notes if n.startswith("NIM may start")]
    assert says.startswith("NIM may start any of 3 profiles")
    assert "vllm-bf16-tp1-pp1: a KV cache of" in says and "vllm-bf16-tp2-pp1: a KV cache of" in says


def test_a_quantized_checkpoint_s_profile_is_named_by_its_method_and_planned_as_quantized():
    fp8, _ = _one(gpu_pod(MULTI, [], {"NIM_MODEL_NAME": "hf://neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"}))
    bf16, _ = _one(gpu_pod(MULTI, [], {"NIM_MODEL_NAME": f"hf://{MODEL}"}))
    assert any(n.startswith("NIM profile vllm-fp8-tp1-pp1 ") for n in fp8.plan.notes)
    assert fp8.plan.weights_per_gpu < 0.6 * bf16.plan.weights_per_gpu


def test_a_gpu_count_not_stated_and_no_tp_is_said_once():
    text = gpu_pod(MULTI, [], {"NIM_MODEL_NAME": f"hf://{MODEL}"}).replace(
        "        resources: {limits: {nvidia.com/gpu: 1}}\n", ""
    )
    r, findings = _one(text)
    assert r.plan is None
    (msg,) = _not_modelled(findings)
    assert "picks the TP of its generic profile by the GPUs it finds" in msg


def test_a_named_profile_still_wins_over_the_generated_choice():
    env = {"NIM_MODEL_NAME": f"hf://{MODEL}", "NIM_MODEL_PROFILE": "vllm-bf16-tp1"}
    r, _ = _one(gpu_pod(MULTI, [], env, gpus=2))
    assert r.settings.tp == 1 and not any("generated for" in n for n in r.plan.notes)


@pytest.mark.parametrize("variable", ["NIM_MODEL_NAME", "NIM_MODEL_PATH"])
@pytest.mark.parametrize("tag", ["1.3.3", "latest"])
def test_a_model_specific_nim_told_to_serve_another_checkpoint_says_that_not_a_missing_list(variable, tag):
    """A model-specific NIM whose NIM_MODEL_NAME / NIM_MODEL_PATH names a checkpoint of its own was said to have
    "no list for meta/llama-3.1-8b-instruct:1.3.3 (it lists 1.1.2, 1.3.3, ...)": a release kvlint does list. The
    reason is the checkpoint: the image's profiles are its shipped model's, and which NIM starts for another is
    not known offline. Said once, at the variable; nothing planned for the shipped model."""
    text = gpu_pod(f"nvcr.io/nim/meta/llama-3.1-8b-instruct:{tag}", [], {variable: "/models/finetune"})
    r, findings = _one(text)
    (said,) = _not_modelled(findings)
    assert said.count(f"{variable} /models/finetune asks the model-specific NIM") == 1, said
    assert "ships meta-llama/Llama-3.1-8B-Instruct" in said and "has no list for" not in said
    assert r.plan is None
    # the variable pinning a profile settles it: planned for the checkpoint (unknown here: KV003, not KV004)
    pinned = gpu_pod(
        f"nvcr.io/nim/meta/llama-3.1-8b-instruct:{tag}",
        [],
        {variable: "/models/finetune", "NIM_MODEL_PROFILE": "vllm-bf16-tp1"},
    )
    _, findings = _one(pinned)
    assert not _not_modelled(findings) and [f.rule for f in findings] == ["KV003"]
