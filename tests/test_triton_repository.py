"""Triton's TensorRT-LLM backend planned from its model repository (kvlint.engines.trtllm.repository): the folder
`tritonserver --model-repository` names, found beside the linted file or in mounted ConfigMaps
(kvlint.extract.pod.folder), its tensorrt_llm model's config.pbtxt (after the container's fill_template.py),
the built engine's config.json and the preprocessing model's tokenizer_dir; without the repository, one KV004
that says what to lint with it."""

from __future__ import annotations

import json
import os
import shutil

from conftest import FIXTURES

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

HERE = FIXTURES / "stacks" / "triton"
GOOD = HERE / "good-triton-trtllm-llama-8b.yaml"
BAD = HERE / "bad-triton-kv-cap-below-max-seq-len.yaml"


def _lint(path, shown: str | None = None):
    r = read_and_lint(str(path), Settings(), shown or os.path.basename(str(path)))
    assert not isinstance(r, str), r
    return r


def test_the_repository_beside_the_file_plans_the_engine_path_with_its_settings():
    r = _lint(GOOD, "triton/good.yaml")
    (res,) = r.deployments
    d, s = res.deployment, res.settings
    assert res.plan is not None and not [f for f in r.findings if f.rule in ("KV004", "KV001", "KV005")]
    assert d.model.value == "meta-llama/Llama-3.1-8B-Instruct"  # the preprocessing model's tokenizer_dir
    assert d.model.where.file == "triton/triton_model_repo/preprocessing/config.pbtxt"
    assert s.extra["backend"] == "trt" and s.utilization == 0.85  # config.pbtxt
    assert d.gpu_memory_utilization.where.file == "triton/triton_model_repo/tensorrt_llm/config.pbtxt"
    assert (s.max_model_len, s.max_num_seqs, s.max_batched_tokens) == (
        8192,
        32,
        8192,
    )  # the engine's config.json
    assert d.max_sequences.where.file == "triton/triton_model_repo/tensorrt_llm/1/config.json"
    assert "kv_max_tokens" not in s.extra  # `${max_tokens_in_paged_kv_cache}` left unfilled: not stated


def test_fill_template_in_the_start_script_sets_the_parameters_the_engine_then_shrinks_to():
    r = _lint(BAD)
    (res,) = r.deployments
    s = res.settings
    assert s.extra["kv_max_tokens"] == 4096 and s.utilization == 0.9 and s.max_model_len == 32768
    assert res.plan.kv_tokens == 4096 and res.plan.startup is not None and res.plan.startup.shrinks_to < 32768
    assert "KV102" in [f.rule for f in r.findings]
    where = res.deployment.extra["kv_max_tokens"].where
    assert where.file.endswith("short_pool_repo/tensorrt_llm/config.pbtxt")  # the template's line it fills


def _copy(tmp_path, fixture=GOOD, repo="triton_model_repo"):
    shutil.copy(fixture, tmp_path / "deploy.yaml")
    if repo:
        shutil.copytree(HERE / repo, tmp_path / repo)
    return tmp_path / "deploy.yaml"


def test_without_the_repository_one_kv004_says_what_to_lint_with_it(tmp_path):
    r = _lint(_copy(tmp_path, repo=""))
    (res,) = r.deployments
    (kv004,) = [f for f in r.findings if f.rule == "KV004"]
    assert res.plan is None and "/models/triton_model_repo" in kv004.message
    assert "lint this file with the repository beside it" in kv004.message
    assert "no models/triton_model_repo/ or triton_model_repo/ beside this file" in kv004.message
    assert kv004.where.line == 24  # at tritonserver, as before


def test_a_repository_without_a_tensorrt_llm_model_is_said(tmp_path):
    path = _copy(tmp_path)
    shutil.rmtree(tmp_path / "triton_model_repo" / "tensorrt_llm")
    (kv004,) = [f for f in _lint(path).findings if f.rule == "KV004"]
    assert "include no tensorrt_llm model" in kv004.message and "preprocessing" in kv004.message


def test_bad_config_pbtxt_is_a_located_kv001_and_no_plan(tmp_path):
    path = _copy(tmp_path)
    config = tmp_path / "triton_model_repo" / "tensorrt_llm" / "config.pbtxt"
    config.write_text('name: "tensorrt_llm"\nbackend: "tensorrtllm"\nparameters: {\n  key: "x"\n')
    r = _lint(path)
    (kv001,) = [f for f in r.findings if f.rule == "KV001"]
    assert (kv001.where.file, kv001.where.line) == (
        "triton_model_repo/tensorrt_llm/config.pbtxt",
        5,
    )  # where the text ends inside the message
    assert r.deployments[0].plan is None


def test_an_engine_config_that_is_not_json_is_a_warning_and_the_build_defaults_apply(tmp_path):
    path = _copy(tmp_path)
    (tmp_path / "triton_model_repo" / "tensorrt_llm" / "1" / "config.json").write_text("[" * 100_000)
    r = _lint(path)
    (kv005,) = [f for f in r.findings if f.rule == "KV005"]
    assert "not a built engine's config.json" in kv005.message
    s = r.deployments[0].settings
    assert (s.max_num_seqs, s.max_batched_tokens) == (2048, 8192)  # trtllm-build's BuildConfig defaults


def test_a_link_out_of_the_repository_is_not_read(tmp_path):
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    path = _copy(deploy)
    config = deploy / "triton_model_repo" / "tensorrt_llm" / "config.pbtxt"
    outside = tmp_path / "outside.pbtxt"
    outside.write_text(config.read_text())
    config.unlink()
    os.symlink(outside, config)
    r = _lint(path)
    assert r.deployments[0].settings is None or r.deployments[0].settings.utilization != 0.85
    assert any(f.rule == "KV004" for f in r.findings)


CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: trtllm-config}
data:
  config.pbtxt: |
    backend: "tensorrtllm"
    parameters: { key: "gpt_model_path" value: { string_value: "/engines/llama" } }
    parameters: { key: "kv_cache_free_gpu_mem_fraction" value: { string_value: "%s" } }
    parameters: { key: "max_tokens_in_paged_kv_cache" value: { string_value: "8192" } }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: triton}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      containers:
        - name: triton
          image: nvcr.io/nvidia/tritonserver:25.03-trtllm-python-py3
          command: ["tritonserver", "--model-repository", "/models"]
          volumeMounts: [{name: cfg, mountPath: /models/tensorrt_llm}]
          resources: {limits: {nvidia.com/gpu: 1}}
      volumes: [{name: cfg, configMap: {name: trtllm-config}}]
"""


def test_a_config_pbtxt_from_a_mounted_configmap_is_read_and_located_at_its_key(tmp_path):
    path = tmp_path / "triton.yaml"
    path.write_text(CONFIGMAP % "0.7")
    r = _lint(path)
    (res,) = r.deployments
    assert res.deployment.gpu_memory_utilization.value == 0.7
    assert res.deployment.gpu_memory_utilization.where.line == 5  # the ConfigMap's key
    assert res.deployment.extra["kv_max_tokens"].value == 8192
    path.write_text(CONFIGMAP % "most")
    (kv005,) = [f for f in _lint(path).findings if f.rule == "KV005"]
    assert kv005.where.line == 5 and "uses its default (0.9" in kv005.message


def test_a_config_pbtxt_too_large_to_read_is_said_not_skipped(tmp_path):
    path = _copy(tmp_path)
    config = tmp_path / "triton_model_repo" / "tensorrt_llm" / "config.pbtxt"
    config.write_text(config.read_text() + "#" * (300 * 1024))
    (kv004,) = [f for f in _lint(path).findings if f.rule == "KV004"]
    assert "cannot all be read" in kv004.message and "larger than 262,144 bytes" in kv004.message


def test_an_engine_outside_the_repository_is_planned_with_the_build_defaults_and_said(tmp_path):
    path = _copy(tmp_path)
    config = tmp_path / "triton_model_repo" / "tensorrt_llm" / "config.pbtxt"
    config.write_text(
        config.read_text().replace("/models/triton_model_repo/tensorrt_llm/1", "/engines/llama")
    )
    r = _lint(path)
    (info,) = [f for f in r.findings if f.rule == "KV004"]
    assert "/engines/llama is not in reach" in info.message and "trtllm-build's defaults" in info.message
    assert info.where.file == "triton_model_repo/tensorrt_llm/config.pbtxt"  # at gpt_model_path
    s = r.deployments[0].settings
    assert (s.max_num_seqs, s.max_batched_tokens, s.max_model_len) == (2048, 8192, 131072)


def test_the_engine_mapping_and_quantization_come_from_its_config_json(tmp_path):
    """pretrained_config.mapping and .quantization of the built engine (tensorrt_llm/builder.py EngineConfig):
    TP 2 with FP8 weights and an FP8 KV cache, on the pod's two GPUs."""
    path = _copy(tmp_path)
    path.write_text(path.read_text().replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2"))
    engine = tmp_path / "triton_model_repo" / "tensorrt_llm" / "1" / "config.json"
    config = json.loads(engine.read_text())
    config["pretrained_config"]["mapping"] = {"world_size": 2, "tp_size": 2, "pp_size": 1}
    config["pretrained_config"]["quantization"] = {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}
    engine.write_text(json.dumps(config, indent=2))
    (res,) = _lint(path).deployments
    s = res.settings
    assert (s.tp, s.pp, s.quantization, s.kv_cache_dtype) == (2, 1, "fp8", "fp8")
    assert res.deployment.tensor_parallel.where.file == "triton_model_repo/tensorrt_llm/1/config.json"
    other = tmp_path / "bf16"
    other.mkdir()
    (bf16,) = _lint(_copy(other)).deployments  # the engine as the fixture built it: TP 1, bf16
    assert res.plan.kv_per_token * 4 == bf16.plan.kv_per_token  # half the KV heads per GPU, half the bytes


def test_several_tensorrt_llm_models_plan_the_first_and_say_the_rest_are_not_checked(tmp_path):
    path = _copy(tmp_path)
    repo = tmp_path / "triton_model_repo"
    shutil.copytree(repo / "tensorrt_llm", repo / "tensorrt_llm_draft")
    r = _lint(path)
    (res,) = r.deployments
    assert res.plan is not None  # the first, as before
    (said,) = [f for f in r.findings if f.rule == "KV004" and "tensorrt_llm models" in f.message]
    assert "2 tensorrt_llm models (tensorrt_llm, tensorrt_llm_draft)" in said.message
    assert "plans tensorrt_llm alone" in said.message and said.severity.name == "INFO"
    assert said.where.file.endswith("tensorrt_llm/config.pbtxt")
    # with --model-control-mode explicit Triton loads only the models it is told to: not said
    text = path.read_text().replace(
        '"--model-repository', '"--model-control-mode=explicit", "--model-repository'
    )
    assert text != path.read_text()
    path.write_text(text)
    explicit = _lint(path)
    assert explicit.deployments[0].plan is not None
    assert explicit.deployments[0].deployment.extra["triton_model_control_mode"].value == "explicit"
    assert not [f for f in explicit.findings if "tensorrt_llm models" in f.message]


def _reuse(path, tag: str, given: str = ""):
    """enable_block_reuse of the CONFIGMAP deployment on `tritonserver:<tag>`, with enable_kv_cache_reuse `given`."""
    text = (CONFIGMAP % "0.7").replace("25.03-trtllm-python-py3", tag)
    if given:
        line = f'    parameters: {{ key: "enable_kv_cache_reuse" value: {{ string_value: "{given}" }} }}\n'
        text = text.replace("---\n", line + "---\n", 1)
    path.write_text(text)
    r = _lint(path)
    (res,) = r.deployments
    return res.deployment.extra["enable_block_reuse"], r.findings


def test_a_default_that_changed_after_v0_18_2_follows_the_release_the_image_runs(tmp_path):
    """enable_kv_cache_reuse not given: false up to TensorRT-LLM 0.18.2 (tensorrtllm_backend
    model_instance_state.cc:165@v0.18.2), true from 0.19.0 (:167@v0.19.0); Triton 25.04 ships 0.18.2 and 25.05
    ships 0.19.0 (triton-inference-server/server docs/introduction/compatibility.md)."""
    path = tmp_path / "triton.yaml"
    old, _ = _reuse(path, "25.04-trtllm-python-py3")
    new, _ = _reuse(path, "25.05-trtllm-python-py3")
    assert (old.value, new.value) == (False, True) and old.origin == new.origin == "default"
    assert "TensorRT-LLM 0.18.2, the release Triton 25.04 ships" in old.note
    assert "TensorRT-LLM 0.19.0, the release Triton 25.05 ships" in new.note and "v0.19.0" in new.note
    unnamed, _ = _reuse(path, "latest")  # no release kvlint maps: the newest, named as assumed
    assert unnamed.value is True and "TensorRT-LLM 1.2.1 assumed" in unnamed.note
    stated, _ = _reuse(path, "25.05-trtllm-python-py3", "false")  # the file wins over any release
    assert (stated.value, stated.origin) == (False, "stated")


def test_an_unreadable_changed_parameter_names_the_default_of_the_release(tmp_path):
    path = tmp_path / "triton.yaml"
    reuse, findings = _reuse(path, "25.05-trtllm-python-py3", "yes")
    (kv005,) = [f for f in findings if f.rule == "KV005"]
    assert "cannot read enable_kv_cache_reuse 'yes'" in kv005.message
    assert (
        "uses its default (true from TensorRT-LLM 0.19.0" in kv005.message and "Triton 25.05" in kv005.message
    )
    assert (reuse.value, reuse.origin) == (True, "default")
