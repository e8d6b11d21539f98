"""NIM_TAGS_SELECTOR and NIM_PIPELINE_PARALLEL_SIZE against the profiles an image's release publishes
(kvlint.engines.nim.tags, selection.choose, parallel.refusal): the selector narrows NIM's automatic selection
to the profiles whose tags match every pair, and the plan says so with the count each reading left; a
selector or PP that leaves nothing runnable is a located warning at the variable; a selector kvlint cannot
read is said where it is written."""

from __future__ import annotations

from conftest import gpu_pod
from test_nim_engine import _one

from kvlint.engines.nim import selection, tags
from kvlint.findings import Severity

IMAGE = "nvcr.io/nim/meta/llama3-8b-instruct:1.0.3"  # 20 profiles (list-model-profiles on 2 x L40S)


def _on_l40s(env: dict[str, str], gpus: int = 2) -> str:
    return gpu_pod(IMAGE, [], env, gpus=gpus).replace("NVIDIA-H100-80GB-HBM3", "NVIDIA-L40S")


def _nim_note(r) -> str:
    (said,) = [n for n in r.plan.notes if n.startswith(("NIM profile", "NIM may start"))]
    return said


def _at_value(text: str, f, value: str) -> bool:
    line = text.splitlines()[f.where.line - 1]
    return line[f.where.column - 1 :].startswith(f'"{value}"')


def test_without_a_selector_nim_picks_the_fp8_throughput_profile_on_one_gpu_of_two():
    # the baseline the selector changes: fp8 TensorRT-LLM profiles come first on L40S, TP 1 and TP 2 tie
    r, _ = _one(_on_l40s({}))
    assert "fp8" in _nim_note(r) and tags.VARIABLE not in _nim_note(r)


def test_a_latency_selector_plans_the_latency_profile_and_says_what_it_left():
    r, findings = _one(_on_l40s({tags.VARIABLE: "profile=latency"}))
    said = _nim_note(r)
    assert said.startswith("NIM profile tensorrt_llm-l40s-fp8-tp2-pp1-latency")
    assert r.settings.tp == 2
    # the arithmetic: 20 published, 9 run on L40S x 2, 6 are not LoRA, 2 are latency ones (fp16 and fp8 TP 2)
    assert (
        "of the 20 profiles 1.0.3 publishes, 9 runnable on 2 of these GPUs, 6 without LoRA, 2 match" in said
    )
    assert not [f for f in findings if f.rule in ("KV004", "KV005", "KV201")]


def test_an_engine_selector_leaves_the_vllm_profiles_which_nim_otherwise_passes_over():
    r, _ = _one(_on_l40s({tags.VARIABLE: "llm_engine=vllm"}))
    assert r.settings.extra["nim_backend"] == "vllm"
    assert "2 match NIM_TAGS_SELECTOR llm_engine=vllm" in _nim_note(r)


def test_pairs_are_combined_so_precision_and_tp_both_pin():
    r, _ = _one(_on_l40s({tags.VARIABLE: "precision=fp16, TP=1"}))
    said = _nim_note(r)
    assert said.startswith("NIM profile tensorrt_llm-l40s-fp16-tp1-pp1-throughput") and r.settings.tp == 1


def test_a_selector_no_runnable_profile_matches_is_a_warning_at_it_with_the_arithmetic():
    text = _on_l40s({tags.VARIABLE: "profile=latency,tp=4"})
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV201"]
    assert f.severity is Severity.WARNING and r.plan is None and _at_value(text, f, "profile=latency,tp=4")
    assert "6 without LoRA, 0 match NIM_TAGS_SELECTOR profile=latency,tp=4" in f.message
    assert "those runnable have tp 1, 2; pp 1; profile latency, throughput, no such tag" in f.message
    assert not [f for f in findings if f.rule == "KV004"]  # said once, at the variable


def test_a_gpu_tag_of_another_card_matches_nothing_runnable_here():
    _, findings = _one(_on_l40s({tags.VARIABLE: "gpu=H100"}))
    (f,) = [f for f in findings if f.rule == "KV201"]
    assert "gpu l40s, no such tag" in f.message


def test_a_pp_no_profile_has_is_a_warning_at_nim_pipeline_parallel_size():
    text = _on_l40s({"NIM_PIPELINE_PARALLEL_SIZE": "2"})
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV201"]
    assert f.severity is Severity.WARNING and r.plan is None and _at_value(text, f, "2")
    assert "NIM_PIPELINE_PARALLEL_SIZE" in text.splitlines()[f.where.line - 1]
    assert "0 of PP 2" in f.message and "pp 1" in f.message


def test_a_pp_a_profile_has_is_planned_and_said():
    r, findings = _one(_on_l40s({"NIM_PIPELINE_PARALLEL_SIZE": "1", "NIM_TENSOR_PARALLEL_SIZE": "2"}))
    assert r.plan is not None and (r.settings.tp, r.settings.pp) == (2, 1)
    assert "the profiles of PP 1 (NIM_PIPELINE_PARALLEL_SIZE)" in _nim_note(r)
    assert not [f for f in findings if f.rule == "KV201"]


def test_an_unparseable_selector_is_a_kv005_at_it_and_nothing_is_planned():
    text = _on_l40s({tags.VARIABLE: "latency"})
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV005"]
    assert f.severity is Severity.WARNING and _at_value(text, f, "latency") and r.plan is None
    assert "tag=value" in (f.fix or "")


def test_a_tag_the_table_does_not_carry_is_not_guessed():
    text = _on_l40s({tags.VARIABLE: "nim_version=1.0.3"})
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV004"]
    assert r.plan is None and _at_value(text, f, "nim_version=1.0.3") and "nim_version" in f.message


def test_nim_model_profile_names_the_profile_and_the_plan_says_the_selector_is_not_applied():
    r, _ = _one(_on_l40s({"NIM_MODEL_PROFILE": "vllm-fp16-tp1", tags.VARIABLE: "profile=latency"}))
    said = _nim_note(r)
    assert said.startswith("NIM profile vllm-fp16-tp1-pp1") and "NIM_TAGS_SELECTOR is not applied" in said


def test_a_nimservice_passes_its_selector_to_the_container():
    text = (
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata: {name: llama3-latency}\nspec:\n"
        "  image: {repository: nvcr.io/nim/meta/llama3-8b-instruct, tag: 1.0.3}\n  authSecret: ngc-api\n"
        "  env:\n    - name: NIM_TAGS_SELECTOR\n      value: profile=latency,precision=fp16\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}\n  resources: {limits: {nvidia.com/gpu: 2}}\n"
    )
    r, _ = _one(text)
    assert _nim_note(r).startswith("NIM profile tensorrt_llm-l40s-fp16-tp2-pp1-latency")


def test_parse_and_match_read_the_manifest_tags():
    assert tags.parse("profile=latency, tp=2") == (("profile", "latency"), ("tp", "2"))
    assert tags.parse("tp=2,") is None and tags.parse("=2") is None
    rel = selection.release_of("meta/llama3-8b-instruct", "1.0.3")
    assert rel is not None
    generic = [p for p in rel.profiles if not p.gpu]
    assert generic and not any(tags.matches(p, (("profile", "latency"),)) for p in generic)  # no such tag
    assert all(tags.matches(p, (("gpu", "L40S"),)) for p in rel.profiles if p.gpu_tag == "l40s")


MULTI = "nvcr.io/nim/nvidia/llm-nim:1.14"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def test_the_multi_llm_nim_keeps_the_generic_profile_the_selector_names():
    # on four GPUs kvlint takes TP 1, 2 and 4 generic profiles as NIM's to pick from; tp=2 keeps one
    r, findings = _one(gpu_pod(MULTI, [], {"NIM_MODEL_NAME": f"hf://{MODEL}", tags.VARIABLE: "tp=2"}, gpus=4))
    assert r.settings.tp == 2 and not [f for f in findings if f.rule == "KV004"]
    (says,) = [n for n in r.plan.notes if n.startswith("NIM profile")]
    assert says.startswith("NIM profile vllm-bf16-tp2-pp1 ") and "NIM_TAGS_SELECTOR tp=2 keeps 1" in says


def test_the_multi_llm_nim_under_a_selector_no_generated_profile_matches_is_not_guessed():
    env = {"NIM_MODEL_NAME": f"hf://{MODEL}", tags.VARIABLE: "llm_engine=sglang"}
    text = gpu_pod(MULTI, [], env, gpus=2)
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV004"]
    assert r.plan is None and _at_value(text, f, "llm_engine=sglang")
    assert "vllm-bf16-tp2-pp1, vllm-bf16-tp1-pp1" in f.message


def test_the_multi_llm_nim_says_a_tag_its_generated_names_do_not_spell():
    env = {"NIM_MODEL_NAME": f"hf://{MODEL}", tags.VARIABLE: "gpu=h100"}
    text = gpu_pod(MULTI, [], env, gpus=2)
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV004"]
    assert r.plan is None and "knows llm_engine, precision, tp, pp" in f.message


RUNTIME = """\
# the shape of NVIDIA/nim-deploy kserve/runtimes/*.yaml, at the release whose profiles are published
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata:
  name: nvidia-nim-llama3-8b-instruct-1.0.3
spec:
  containers:
  - env:
    - name: NIM_CACHE_PATH
      value: /mnt/models/cache
    - name: NIM_TAGS_SELECTOR
      value: llm_engine=vllm,tp=1
    image: nvcr.io/nim/meta/llama3-8b-instruct:1.0.3
    name: kserve-container
    volumeMounts:
    - mountPath: /dev/shm
      name: dshm
  supportedModelFormats:
  - autoSelect: true
    name: nvidia-nim-llama3-8b-instruct
    version: "1.0.3"
  volumes:
  - emptyDir: {medium: Memory, sizeLimit: 16Gi}
    name: dshm
"""
ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llama3-8b-instruct-vllm
spec:
  predictor:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}
    model:
      modelFormat: {name: nvidia-nim-llama3-8b-instruct}
      resources:
        limits: {nvidia.com/gpu: "1"}
      runtime: nvidia-nim-llama3-8b-instruct-1.0.3
"""


def test_a_kserve_runtime_s_selector_reaches_the_predictor_s_plan(tmp_path):
    from kvlint.run.lint import read_and_lint
    from kvlint.run.settings import Settings

    (tmp_path / "runtime.yaml").write_text(RUNTIME)
    (tmp_path / "isvc.yaml").write_text(ISVC)
    result = read_and_lint(str(tmp_path / "isvc.yaml"), Settings(), "isvc.yaml")
    assert not isinstance(result, str)
    (r,) = result.deployments
    # without the selector NIM would start the fp8 TensorRT-LLM throughput profile on one L40S
    assert r.plan is not None and r.settings.extra["nim_backend"] == "vllm" and r.settings.tp == 1
    assert "1 match NIM_TAGS_SELECTOR llm_engine=vllm,tp=1" in _nim_note(r)


def test_a_release_without_a_published_list_says_the_selector_cannot_be_applied():
    # llama-3.1-8b-instruct 1.1.0: its list was looked for and not found (data/profiles.json `unpublished`)
    text = gpu_pod("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.1.0", [], {tags.VARIABLE: "profile=latency"})
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV004"]
    assert r.plan is None and "NIM_TAGS_SELECTOR profile=latency narrows that choice" in f.message


def test_a_tp_variable_and_a_selector_tp_that_disagree_are_both_named():
    text = _on_l40s({"NIM_TENSOR_PARALLEL_SIZE": "2", tags.VARIABLE: "tp=1"})
    r, findings = _one(text)
    (f,) = [f for f in findings if f.rule == "KV201"]
    assert r.plan is None and f.severity is Severity.WARNING
    assert f.message.startswith("NIM_TENSOR_PARALLEL_SIZE 2, NIM_TAGS_SELECTOR tp=1: no profile")
    assert "0 match NIM_TAGS_SELECTOR tp=1" in f.message
    assert (f.fix or "").startswith("set NIM_TENSOR_PARALLEL_SIZE and NIM_TAGS_SELECTOR to what")
