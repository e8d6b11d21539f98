"""NIM's profile selection offline (kvlint.engines.nim.selection, planned): the profiles an image publishes at
its release, which of them the GPUs admit, the one NIM starts (or each it may start), planned by the profile's
backend; what no published profile covers stays a KV004 saying why."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, gpu_pod, lint, shared

from kvlint.engines.nim import selection

L3 = selection.release_of("meta/llama3-8b-instruct", "1.0.3")
# what list-model-profiles printed for nvcr.io/nim/meta/llama3-8b-instruct:1.0.3 on 2 x L40S under "Compatible
# with system and runnable" (its LoRA ones included), jovanjuzy/nim-training@de3a6898
# L40S/docker-run-llama3-8b-instruct-lora-download-to-cache.sh; the table holds every profile it printed
PRINTED_RUNNABLE_ON_2_L40S = {
    "tensorrt_llm-l40s-fp8-tp2-pp1-latency",
    "tensorrt_llm-l40s-fp8-tp1-pp1-throughput",
    "tensorrt_llm-l40s-fp16-tp2-pp1-latency",
    "tensorrt_llm-l40s-fp16-tp1-pp1-throughput",
    "vllm-fp16-tp2-pp1",
    "vllm-fp16-tp1-pp1",
    "tensorrt_llm-l40s-fp16-tp1-pp1-throughput-lora",
    "vllm-fp16-tp2-pp1-lora",
    "vllm-fp16-tp1-pp1-lora",
}


def _names(profiles) -> set[str]:
    return {p.name for p in profiles}


def _pod(image: str, product: str, gpus: int, env: dict[str, str] | None = None) -> str:
    return gpu_pod(image, [], env, gpus=gpus).replace("NVIDIA-H100-80GB-HBM3", product)


def _one(text: str):
    result = lint(text)
    (r,) = result.deployments
    return r, result.findings


def test_the_compatibility_check_reproduces_what_nim_printed():
    assert L3 is not None and len(L3.profiles) == 20
    choice = selection.choose(L3, "l40s", 2)
    assert _names(choice.runnable) == PRINTED_RUNNABLE_ON_2_L40S


def test_nim_prefers_tensorrt_llm_then_the_lower_precision():
    assert L3 is not None
    # two fp8 TensorRT-LLM profiles tie on 2 GPUs (a throughput and a latency one): both are left to check
    assert _names(selection.choose(L3, "l40s", 2).picked) == {
        "tensorrt_llm-l40s-fp8-tp1-pp1-throughput",
        "tensorrt_llm-l40s-fp8-tp2-pp1-latency",
    }
    assert _names(selection.choose(L3, "l40s", 1).picked) == {"tensorrt_llm-l40s-fp8-tp1-pp1-throughput"}
    assert _names(selection.choose(L3, "a100-80gb-sxm", 1).picked) == {
        "tensorrt_llm-a100-fp16-tp1-pp1-throughput"
    }
    # a GPU no profile names (an L4): the generic vLLM profile
    assert _names(selection.choose(L3, "l4", 1).picked) == {"vllm-fp16-tp1-pp1"}


def test_nim_variables_narrow_the_choice():
    assert L3 is not None
    assert _names(selection.choose(L3, "l40s", 2, tp=2).picked) == {"tensorrt_llm-l40s-fp8-tp2-pp1-latency"}
    assert _names(selection.choose(L3, "l40s", 1, lora=True).picked) == {
        "tensorrt_llm-l40s-fp16-tp1-pp1-throughput-lora"
    }
    none = selection.choose(L3, "l40s", 1, tp=4)
    assert not none.picked and "no profile runnable here has TP 4" in none.none


def test_a_gpu_no_profile_targets_and_none_generic_is_said():
    only_h100 = selection.Release(
        "org/model",
        "1.0",
        "a hand-made list",
        (selection.Published("a" * 64, "tensorrt_llm", "fp8", 1, 1, 1, "h100-sxm", "h100"),),
    )
    choice = selection.choose(only_h100, "l40s", 1)
    assert not choice.picked and "targets this GPU (they target h100) and none is generic" in choice.none


def test_a_profile_named_by_id_or_name_is_found_in_the_list():
    assert L3 is not None
    p = selection.by_id_or_name(L3, "09e2f8e68f78ce94bf79d15b40a21333cea5d09dbe01ede63f6c957f4fcfab7b")
    assert p is not None and p.name == "tensorrt_llm-l40s-fp8-tp1-pp1-throughput"
    assert (
        selection.by_id_or_name(L3, "tensorrt_llm-l40s-fp8-tp1-throughput") == p
    )  # list-model-profiles' spelling
    assert selection.release_of("meta/llama3-8b-instruct", "1.0.0") is None  # never another release's list


IMAGE = "nvcr.io/nim/meta/llama3-8b-instruct:1.0.3"


def test_the_selected_tensorrt_llm_profile_is_planned_by_tensorrt_llm():
    r, findings = _one(_pod(IMAGE, "NVIDIA-L40S", 1))
    assert r.plan is not None and r.plan.engine == "trtllm" and r.settings.engine == "nim"
    assert r.settings.tp == 1 and r.settings.quantization == "fp8"
    assert "tensorrt_llm-l40s-fp8-tp1-pp1-throughput" in r.plan.notes[-1]
    assert not [f for f in findings if f.rule == "KV004"]


def test_a_pre_built_engine_s_build_limits_are_named_as_assumed_and_a_vllm_profile_s_are_not():
    # NIM publishes a profile's tags, not its engine's build limits; they size the decoder buffers
    r, _ = _one(_pod(IMAGE, "NVIDIA-L40S", 1))
    assert "does not publish the limits the profile's engine was built with" in r.plan.notes[-1]
    assert f"max_batch_size {r.settings.max_num_seqs:,}" in r.plan.notes[-1]
    generic, _ = _one(_pod(IMAGE, "NVIDIA-L4", 1))
    assert not any("built with" in n for n in generic.plan.notes)


def test_a_generic_profile_is_planned_by_vllm():
    r, _ = _one(_pod(IMAGE, "NVIDIA-L4", 1))
    assert r.plan is not None and r.plan.engine == "vllm" and r.settings.dtype == "float16"


def test_profiles_nim_may_both_start_are_each_checked_and_the_default_named():
    r, findings = _one((FIXTURES / "stacks" / "nim" / "good-nim-auto-profile-2xl40s.yaml").read_text())
    assert r.settings.tp == 2 and r.plan.engine == "trtllm"  # the default: both GPUs used
    said = r.plan.notes[-1]
    assert "kvlint's default is tensorrt_llm-l40s-fp8-tp2-pp1-latency" in said
    assert "tensorrt_llm-l40s-fp8-tp1-pp1-throughput: a KV cache of" in said
    assert not [f for f in findings if f.rule in ("KV004", "KV201")]


def test_nim_model_profile_by_id_is_the_profile_run():
    env = {"NIM_MODEL_PROFILE": "09e2f8e68f78ce94bf79d15b40a21333cea5d09dbe01ede63f6c957f4fcfab7b"}
    r, _ = _one(_pod(IMAGE, "NVIDIA-L40S", 1, env))
    assert r.plan is not None and r.settings.tp == 1 and "named by NIM_MODEL_PROFILE" in r.plan.notes[-1]


def test_a_profile_built_for_another_gpu_is_a_kv004():
    env = {"NIM_MODEL_PROFILE": "tensorrt_llm-h100-fp8-tp1-throughput"}
    r, findings = _one(_pod(IMAGE, "NVIDIA-L40S", 1, env))
    assert r.plan is None
    (f,) = [f for f in findings if f.rule == "KV004"]
    assert "is built for h100, not NVIDIA L40S" in f.message


def test_too_few_gpus_for_every_profile_is_a_kv004():
    r, findings = _one((FIXTURES / "stacks" / "nim" / "bad-nim-profile-needs-more-gpus.yaml").read_text())
    assert r.plan is None
    (f,) = [f for f in findings if f.rule == "KV004"]
    assert "needs 2 GPUs or more, and the pod has 1" in f.message


def test_a_tensorrt_llm_profile_named_without_a_list_is_planned_from_its_name():
    env = {"NIM_MODEL_PROFILE": "tensorrt_llm-h100-fp8-tp2-throughput"}
    r, _ = _one(gpu_pod("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.1.0", [], env, gpus=2))
    assert r.plan is not None and r.plan.engine == "trtllm" and r.settings.tp == 2


def test_real_nim_manifests():
    corpus = shared("corpus")  # the one skip of this module on a bare clone
    published = {
        # NIMService meta/llama-3.1-8b-instruct 1.3.3 on 2 GPUs of a type it leaves to Karpenter
        "manifests/awslabs__ai-on-eks__blueprints__inference__gpu__nvidia-nim-operator-llama3-8b__nim-service-llama3-8b-instruct.yaml",
        # NIMService meta/llama-3.2-1b-instruct 1.12.0 on 1 GPU
        "manifests2/NVIDIA__k8s-nim-operator__config__samples__nim__serving__kserve__standard__llm.yaml",
    }
    for name in sorted(published):
        result = lint((corpus / name).read_text())
        rules = {f.rule: f for f in result.findings}
        assert "KV004" not in rules and "KV201" not in rules, name
        assert "fits on a" in rules["KV002"].message, name
    # an image whose release kvlint has no list for stays a KV004 saying so
    unlisted = (
        corpus / "manifests" / "NVIDIA__nim-deploy__kserve__runtimes__mixtral-8x7b-instruct-v01-1.0.0.yaml"
    )
    (f,) = [f for f in lint(unlisted.read_text()).findings if f.rule == "KV004"]
    assert "no list for mistralai/mixtral-8x7b-instruct-v01:1.0.0" in f.message


def _on_fleet(image: str, gpus: int):
    from kvlint.run.config import load_settings
    from kvlint.run.lint import lint_text

    settings = load_settings(str(FIXTURES / "fleet" / ".kvlint.yaml"))  # fleet: L4, A100-80GB, H100
    text = _pod(image, "", gpus).replace("      nodeSelector: {nvidia.com/gpu.product: }\n", "")
    (kv002,) = [
        f for f in lint_text(text.encode(), "deploy.yaml", settings, ".").findings if f.rule == "KV002"
    ]
    return kv002.message


def test_on_a_fleet_each_gpu_gets_its_own_profile_and_a_refusal_says_why():
    image = "nvcr.io/nim/mistralai/mixtral-8x7b-instruct-v01:1.3.0"
    # an A100 and an H100 run their TensorRT-LLM profiles (TP 2); an L4 only the generic vLLM one, too small
    assert "fits on NVIDIA A100 80GB SXM4, NVIDIA H100 SXM5 80GB; does not fit on NVIDIA L4" in _on_fleet(
        image, 2
    )
    assert (
        "not checked on NVIDIA L4, NVIDIA A100 80GB SXM4, NVIDIA H100 SXM5 80GB: every profile"
        in _on_fleet(image, 1)
    )


def _fix_words(findings, rule: str) -> list[str]:
    """The fix text and each fix's message of the `rule` findings (asserting there is one)."""
    found = [f for f in findings if f.rule == rule]
    assert found, [f.rule for f in findings]
    return [w for f in found for w in (f.fix, *(x.message for x in f.fixes))]


L4_PAIR = ("NVIDIA-H100-80GB-HBM3", "NVIDIA-L4")
LLAMA31 = "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3"


@pytest.mark.parametrize(("length", "rule"), [(None, "KV102"), ("60000", "KV103")])
def test_a_tensorrt_llm_profile_s_fixes_name_no_vllm_flag(length, rule):
    # 2 x L4 at release 1.3.3: NIM's selection leaves TensorRT-LLM profiles first (kvlint's default is the
    # TP 2 one); that backend reads NIM's own variables, never a vLLM flag (NIM_PASSTHROUGH_ARGS is vLLM's)
    # (60,000 tokens fit the TP 2 pool; the 2,048 sequences of it do not: KV103)
    env = {"NIM_MAX_MODEL_LEN": length} if length else {}
    r, findings = _one(gpu_pod(LLAMA31, [], env, gpus=2).replace(*L4_PAIR))
    assert r.settings.extra["nim_backend"] == "trtllm"
    words = _fix_words(findings, rule)
    assert not [w for w in words if "--" in w]
    assert any("NIM_MAX_MODEL_LEN" in w for w in words)


def test_a_vllm_profile_s_fixes_keep_vllm_s_flags():
    env = {"NIM_MODEL_PROFILE": "vllm-bf16-tp2", "NIM_MAX_MODEL_LEN": "100000"}
    r, findings = _one(gpu_pod(LLAMA31, [], env, gpus=2).replace(*L4_PAIR))
    assert r.settings.extra.get("nim_backend", "vllm") == "vllm"
    assert any("--max-num-seqs" in w for w in _fix_words(findings, "KV103"))


L31 = selection.release_of("meta/llama-3.1-8b-instruct", "1.1.2")
# what list-model-profiles printed for nvcr.io/nim/meta/llama-3.1-8b-instruct:1.1.2 on 2 x L40S under "Compatible
# with system and runnable", jovanjuzy/nim-training@de3a6898 L40S/docker-run-llama-3.1-8b-instruct-download-to-
# cache.sh:24-33; the table holds the 15 it printed as incompatible too
PRINTED_1_1_2_RUNNABLE_ON_2_L40S = {
    "tensorrt_llm-l40s-bf16-tp2-pp1-latency",
    "tensorrt_llm-l40s-bf16-tp2-pp1-throughput",
    "tensorrt_llm-l40s-bf16-tp1-pp1-throughput",
    "vllm-fp16-tp2-pp1",
    "vllm-fp16-tp1-pp1",
    "tensorrt_llm-l40s-bf16-tp2-pp1-throughput-lora",
    "vllm-fp16-tp2-pp1-lora",
    "vllm-fp16-tp1-pp1-lora",
}


def test_llama_3_1_8b_1_1_2_compatibility_reproduces_what_nim_printed():
    assert L31 is not None and len(L31.profiles) == 23
    assert _names(selection.choose(L31, "l40s", 2).runnable) == PRINTED_1_1_2_RUNNABLE_ON_2_L40S


@pytest.mark.parametrize(
    ("gpu", "count", "picked"),
    [
        # an optimized TensorRT-LLM profile for the GPU found; on an H100 its fp8 one (lower precision first)
        ("l40s", 1, {"tensorrt_llm-l40s-bf16-tp1-pp1-throughput"}),
        ("h100-sxm", 1, {"tensorrt_llm-h100-fp8-tp1-pp1-throughput"}),
        ("a10g", 2, {"tensorrt_llm-a10g-bf16-tp2-pp1-throughput"}),
        # no profile of 1.1.2 targets an L4 or an H200: the generic vLLM profiles the GPU count admits (the
        # documented order does not rank their TP: each is left, and checked)
        ("l4", 1, {"vllm-fp16-tp1-pp1"}),
        ("h200", 4, {"vllm-fp16-tp1-pp1", "vllm-fp16-tp2-pp1", "vllm-fp16-tp4-pp1"}),
    ],
)
def test_llama_3_1_8b_1_1_2_selects_the_profile_nim_would(gpu, count, picked):
    assert L31 is not None
    assert _names(selection.choose(L31, gpu, count).picked) == picked


def test_llama_3_1_8b_1_1_2_is_planned_by_the_selected_profile_s_backend():
    image = "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.1.2"
    r, findings = _one(_pod(image, "NVIDIA-L40S", 1))
    assert r.plan is not None and r.plan.engine == "trtllm" and r.settings.dtype == "bfloat16"
    assert "tensorrt_llm-l40s-bf16-tp1-pp1-throughput" in r.plan.notes[-1]
    assert not [f for f in findings if f.rule == "KV004"]
    r, _ = _one(_pod(image, "NVIDIA-L4", 1))  # the documented fallback: a generic profile, vLLM
    assert r.plan is not None and r.plan.engine == "vllm" and r.settings.dtype == "float16"


def test_a_release_looked_for_and_not_found_says_so_and_borrows_no_list():
    # 1.1.2's list is published, 1.1.0's is not: 1.1.0 stays not checked, naming the release and what was found
    assert selection.release_of("meta/llama-3.1-8b-instruct", "1.1.0") is None
    r, findings = _one(_pod("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.1.0", "NVIDIA-L40S", 1))
    (f,) = [f for f in findings if f.rule == "KV004"]
    assert r.plan is None and "no list for meta/llama-3.1-8b-instruct:1.1.0 (it lists 1.1.2," in f.message
    assert "was looked for in public repositories, issues and pages, and found: none" in f.message
    # a release no one looked for says only that the table has no list
    (f,) = [
        f
        for f in _one(_pod("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.4.0", "NVIDIA-L40S", 1))[1]
        if f.rule == "KV004"
    ]
    assert "no list for meta/llama-3.1-8b-instruct:1.4.0" in f.message and "looked for" not in f.message
