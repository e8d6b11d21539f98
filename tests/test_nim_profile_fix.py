"""The NIM_MODEL_PROFILE fix (kvlint.engines.nim.alternatives, rules/fixes.other_run): when the profile NIM runs
does not hold one sequence of its context and another profile its release publishes for these GPUs does (fp8
weights, a larger TP), KV102's fix names that profile, display-only, by the id every release accepts."""

from __future__ import annotations

from conftest import FIXTURES, gpu_pod, lint

from kvlint.findings import Applicability

LONG = (FIXTURES / "KV102" / "bad-nim-70b-bf16-2xh100-128k.yaml").read_text()


def _kv102(text: str):
    return [f for f in lint(text).findings if f.rule == "KV102"]


def test_a_published_profile_that_holds_the_context_is_named_display_only():
    (f,) = _kv102(LONG)
    assert "NIM_MODEL_PROFILE tensorrt_llm-h100-fp8-tp2-pp1-throughput" in (f.fix or "")
    (named,) = [x for x in f.fixes if "NIM_MODEL_PROFILE" in x.message]
    assert named.applicability is Applicability.DISPLAY and not named.edits
    profile_id = named.message.split()[2]
    assert len(profile_id) == 64  # the id, which NIM_MODEL_PROFILE takes in every release
    # what the fix offers, set by hand, runs the context it asked for
    assert not _kv102(LONG.replace("value: vllm-bf16-tp2-pp1", f"value: {profile_id}"))


def test_no_profile_is_named_when_none_the_gpus_admit_holds_the_context():
    (f,) = _kv102((FIXTURES / "KV102" / "bad-nim-8b-l4-128k.yaml").read_text())
    assert "NIM_MODEL_PROFILE" not in (f.fix or "") and f.fix


def test_no_profile_is_named_without_the_release_s_published_list():
    # a vLLM profile named on a tag kvlint has no list for: no other profile is known to offer
    env = {"NIM_MODEL_PROFILE": "vllm-bf16-tp1", "NIM_MAX_MODEL_LEN": "131072"}
    text = gpu_pod("nvcr.io/nim/meta/llama-3.1-8b-instruct:0.9.9", [], env).replace(
        "NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"
    )
    (f,) = _kv102(text)
    assert "NIM_MODEL_PROFILE" not in (f.fix or "")
