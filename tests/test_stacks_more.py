"""Issue 12, later pieces: findings that follow from another's assumption, KServe multi-node runtimes,
values read from another file located there, KAITO InferenceSets, OME / llmaz readers. Fixtures in
fixtures/stacks/ follow the real layouts; corpus files are read from their excerpts under
tests/data/corpus (`carried`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, carried

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

STACKS = FIXTURES / "stacks"
CHARTS = STACKS / "helm-charts"


def run(path: Path, name: str | None = None):
    result = read_and_lint(str(path), Settings(), name or str(path))
    assert not isinstance(result, str), result
    return result


def test_no_gpu_type_on_a_pod_that_requests_no_gpu_follows_from_the_request_finding():
    """production-stack requestGPU left out -> 0 GPUs (KV005 warning); the missing GPU type follows from
    it and is an info, not a second warning on the same line."""
    result = run(CHARTS / "bad-production-stack-no-gpu-request.yaml")
    by_rule = {f.rule: f for f in result.findings}
    assert by_rule["KV005"].severity.name == "WARNING"
    assert by_rule["KV002"].severity.name == "INFO"
    assert by_rule["KV002"].where.line == by_rule["KV005"].where.line


# --- KServe multi-node (workerSpec) -----------------------------------------------------------------

MULTI = STACKS / "kserve-isvc"


def test_kserve_multinode_sizes_and_parallelism_come_from_workerspec():
    """TP 2 x PP 2 on kserve-huggingfaceserver-multinode beside the file, no GPU request: KServe makes 4 Ray
    nodes of 1 GPU (computeRayNodeAndGPUs case 4) and passes TP/PP as env the runtime's command reads."""
    result = run(MULTI / "multinode" / "isvc.yaml")
    (r,) = result.deployments
    d = r.deployment
    assert d.engine.value == "vllm"
    assert d.tensor_parallel.value == 2 and d.tensor_parallel.where.line == 20
    assert d.pipeline_parallel.value == 2 and d.pipeline_parallel.where.line == 21
    assert d.pods.value == 4 and d.gpus.value == 4 and d.gpus_per_pod.value == 1
    assert d.has_shm and d.shm_size.value == "3Gi"  # the runtime's memory-backed /dev/shm
    assert not [f for f in result.findings if f.rule in ("KV201", "KV207", "KV005")]
    kv003 = next(f for f in result.findings if f.rule == "KV003")
    assert (
        "pvc://llama-3-8b-pvc" in kv003.message and kv003.where.line == 16
    )  # the storageUri, not "not stated"
    # a volume path names no model id: unknown, not the author's mistake
    assert kv003.severity.name == "INFO"


def test_kserve_multinode_requests_that_cannot_cover_tp_x_pp_are_kv201():
    result = run(MULTI / "multinode-bad" / "isvc.yaml")
    kv201 = next(f for f in result.findings if f.rule == "KV201")
    assert kv201.severity.name == "ERROR" and kv201.where.line == 24


def test_kserve_value_from_a_runtime_in_another_file_is_located_there():
    result = run(MULTI / "multinode-bad" / "isvc.yaml")
    kv005 = next(f for f in result.findings if f.rule == "KV005")
    runtime = MULTI / "multinode-bad" / "runtime.yaml"
    assert kv005.where.file == str(runtime)
    line = runtime.read_text().splitlines()[kv005.where.line - 1]
    assert line[kv005.where.column - 1 :].startswith("--max_modle_len")


def test_kserve_ray_node_count_follows_kserve():
    """kserve/kserve@aaac4e29 components/predictor.go computeRayNodeAndGPUs, case by case."""
    from kvlint.extract.kinds.kserve_multinode import ray_nodes

    assert ray_nodes(8, 0, 2) == (4, 2, 2, True)  # worker GPUs set: head takes the rest
    assert ray_nodes(8, 1, 2) == (4, 1, 2, False)  # 1 + 3 x 2 < 8: KServe refuses
    assert ray_nodes(4, 4, 1) == (1, 4, 0, True)  # the head alone covers TP x PP
    assert ray_nodes(5, 2, 0) == (4, 2, 1, True)  # head only: one-GPU workers for the rest
    assert ray_nodes(4, 0, 0) == (4, 1, 1, True)  # no GPUs stated: one per node


def test_kserve_workerspec_on_a_single_node_runtime_is_refused(tmp_path):
    runtime = (MULTI / "runtime-beside" / "runtime.yaml").read_text()
    isvc = (MULTI / "runtime-beside" / "isvc.yaml").read_text()
    assert "workerSpec" not in runtime and "workerSpec" not in isvc
    (tmp_path / "runtime.yaml").write_text(runtime)
    named = isvc.replace("    model:\n", "    model:\n      runtime: vllm\n", 1)  # chosen by name
    (tmp_path / "isvc.yaml").write_text(named.rstrip() + "\n    workerSpec:\n      tensorParallelSize: 2\n")
    result = run(tmp_path / "isvc.yaml")
    kv005 = [f for f in result.findings if f.rule == "KV005"]
    assert kv005 and "refuses" in kv005[0].message and kv005[0].severity.name == "WARNING"


def test_a_line_comment_does_not_suppress_the_same_line_number_of_the_runtime_file(tmp_path):
    src = MULTI / "multinode-bad"
    (tmp_path / "runtime.yaml").write_text((src / "runtime.yaml").read_text())
    lines = (src / "isvc.yaml").read_text().splitlines()
    assert lines[22].strip() == "workerSpec:"  # line 23, the line of the runtime's KV005
    lines[22] += "  # kvlint: disable=KV005 -- only this file's line 23"
    (tmp_path / "isvc.yaml").write_text("\n".join(lines) + "\n")
    result = run(tmp_path / "isvc.yaml")
    kv005 = [f for f in result.findings if f.rule == "KV005"]
    assert [(f.where.file.endswith("runtime.yaml"), f.where.line) for f in kv005] == [(True, 23)]
    assert not result.suppressed


# --- files the unread net now says (issue 12 item 4 hand-check) -------------------------------------------


def test_a_patch_with_engine_options_and_no_image_is_said():
    result = run(FIXTURES / "KV004" / "bad-kustomize-patch-engine-args.yaml")
    (f,) = result.findings
    assert f.rule == "KV004" and f.where.line == 15


def test_a_patch_without_engine_options_is_not(tmp_path):
    text = (FIXTURES / "KV004" / "bad-kustomize-patch-engine-args.yaml").read_text()
    path = tmp_path / "patch.yaml"
    path.write_text(
        text.replace("--tensor-parallel-size=1", "--log-level=debug").replace("--quantization=awq", "-v")
    )
    assert run(path).findings == []


def test_values_naming_an_accelerator_resource_and_a_hub_model_are_said(tmp_path):
    result = run(FIXTURES / "KV004" / "bad-accelerator-values-unmodelled.yaml")
    (f,) = result.findings
    assert f.rule == "KV004" and f.where.line == 9
    assert "ibm.com/spyre_pf" in f.message and "ibm-granite/granite-3.3-8b-instruct" in f.message
    text = (FIXTURES / "KV004" / "bad-accelerator-values-unmodelled.yaml").read_text()
    path = tmp_path / "values.yaml"
    path.write_text(text.replace("ibm-granite/granite-3.3-8b-instruct", "granite"))  # no Hub id: nothing said
    assert run(path).findings == []


# --- OME (ome.io) ---------------------------------------------------------------------------------------

OME = STACKS / "ome" / "beside"  # runtime, base model and InferenceServices side by side


def test_ome_isvc_merges_its_runtime_and_base_model_beside_it():
    result = run(OME / "isvc.yaml")
    (r,) = result.deployments
    d = r.deployment
    assert d.name == "llama-3-3-70b-instruct/engine" and d.engine.value == "vllm"
    assert d.model.value == "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic"  # the base model's hf:// storageUri
    assert d.model.where.file.endswith("basemodel.yaml") and d.model.where.line == 11
    assert d.tensor_parallel.value == 2 and d.tensor_parallel.where.file.endswith("runtime.yaml")
    assert d.gpus.value == 2 and d.gpu.value == "h100-sxm" and d.has_shm
    assert r.plan is not None
    assert not [f for f in result.findings if f.severity.name in ("WARNING", "ERROR")]


def test_ome_isvc_engine_override_wins_over_the_runtime():
    result = run(OME / "bad-isvc-one-gpu.yaml")
    (d,) = [r.deployment for r in result.deployments]
    assert d.gpus_per_pod.value == 1 and d.gpus_per_pod.where.file.endswith("bad-isvc-one-gpu.yaml")
    assert [f.rule for f in result.findings if f.severity.name == "ERROR"] == ["KV201"]


def test_ome_runtime_alone_is_a_template_with_its_engine_read():
    result = run(OME / "runtime.yaml")
    (d,) = [r.deployment for r in result.deployments]
    assert d.engine.value == "vllm" and d.gpus.value == 2 and d.tensor_parallel.value == 2
    (f,) = result.findings
    assert f.rule == "KV004"


def test_ome_multinode_component_is_one_lws_group_with_parallelism_size():
    """kimi-k2-pd runtime (corpus excerpt): engine leader 8 GPUs + worker.size 3 -> 4 pods, --tp-size $(PARALLELISM_SIZE)
    = 8 x 4 = 32 (components/engine.go setParallelismEnvVarForEngine); SGLang DP attention adds no GPUs."""
    path = carried("sgl-project__ome__config__runtimes__srt__kimi-k2-pd-rt.yaml")
    result = run(path)
    by = {r.deployment.name.split("/")[-1]: r.deployment for r in result.deployments}
    assert (
        by["engine"].pods.value == 4
        and by["engine"].gpus.value == 32
        and by["engine"].tensor_parallel.value == 32
    )
    assert by["decoder"].pods.value == 12 and by["decoder"].gpus.value == 96
    assert not [f for f in result.findings if f.rule == "KV201"]


def test_kserve_isvc_does_not_take_an_ome_runtime(tmp_path):
    """Both projects name their runtime kinds ClusterServingRuntime: a KServe isvc selects only serving.kserve.io."""
    (tmp_path / "rt.yaml").write_text((OME / "runtime.yaml").read_text())
    isvc = (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: x}\nspec:\n  predictor:\n"
        "    model:\n      runtime: vllm-llama-3-3-70b-instruct-fp8-dynamic\n      modelFormat: {name: safetensors}\n"
    )
    (tmp_path / "isvc.yaml").write_text(isvc)
    result = run(tmp_path / "isvc.yaml")
    assert any("is not in this file or a YAML file beside it" in f.message for f in result.findings)


def test_sglang_dp_attention_stays_inside_the_tp_group():
    """sgl-project/sglang server_args.py: with --enable-dp-attention, dp_size divides tp_size and the world is
    tp x pp; without it --dp-size replicates the TP group."""
    from conftest import lint

    pod = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ds}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: s\n        image: lmsysorg/sglang:v0.5.5\n"
        "        command: [python3, -m, sglang.launch_server, --model-path, deepseek-ai/DeepSeek-V3, --tp-size, '8',"
        " --dp-size, '8'EXTRA]\n        resources: {limits: {nvidia.com/gpu: 8}}\n"
    )
    assert not [
        f for f in lint(pod.replace("EXTRA", ", --enable-dp-attention")).findings if f.rule == "KV201"
    ]
    assert [f for f in lint(pod.replace("EXTRA", "")).findings if f.rule == "KV201"]


# --- KAITO: the operator's own parallelism and node count ----------------------------------------------------

KAITO = STACKS / "kaito"


def test_kaito_estimator_and_parallelism_follow_kaito():
    """kaito-project/kaito@056b828 nodesestimator.EstimateNodeCount and modelFitsOnSingleGPU on its own catalog."""
    from kvlint.catalog import kaito as kc

    r1, h100x2 = kc.model_facts("deepseek-ai/DeepSeek-R1-0528"), kc.sku("Standard_NC80adis_H100_v5")
    assert r1 is not None and h100x2 == {"gpus": 2, "gpu_mem": "188Gi"}
    assert kc.bytes_per_token(r1) == (512 + 64) * 61 * 2  # MLA latent, fp16
    assert kc.estimate_nodes(r1, h100x2) == 5  # 641.30Gi x 1.02 over 2 x 94Gi x 0.84 less overheads
    a10 = kc.sku("Standard_NV36ads_A10_v5")
    assert (
        kc.estimate_nodes(kc.model_facts("openai/gpt-oss-20b"), a10) == 2
    )  # 25.63Gi does not fit 24Gi x 0.84
    assert kc.fits_half_gpu(kc.model_facts("microsoft/Phi-4-mini-instruct"), h100x2)
    assert not kc.fits_half_gpu(
        kc.model_facts("microsoft/phi-4"), kc.sku("Standard_NC24ads_A100_v4")
    )  # 1 GPU


def test_kaito_workspace_on_a_multi_gpu_vm_gets_the_operators_data_parallelism():
    result = run(KAITO / "workspace-multigpu-dp.yaml")
    (r,) = result.deployments
    d = r.deployment
    assert d.engine.value == "vllm" and d.data_parallel.value == 2 and d.tensor_parallel.value == 1
    assert "KAITO's operator" in (d.data_parallel.note or d.tensor_parallel.note or "")
    assert d.gpus.value == 2 and d.pods.value == 1 and r.plan is not None
    assert not [f for f in result.findings if f.severity.name in ("WARNING", "ERROR")]


def test_kaito_multi_node_workspace_gets_pipeline_parallel_over_estimated_nodes():
    path = carried("kaito-project__kaito__examples__inference__kaito_workspace_deepseek_r1.yaml")
    (r,) = run(path).deployments
    d = r.deployment
    assert d.pods.value == 5 and d.pipeline_parallel.value == 5 and d.tensor_parallel.value == 2
    assert d.gpus.value == 10  # resource.count 6 is only the estimator's starting point
    # deepseek-ai/DeepSeek-R1-0528 is a dated release the catalog has no config for: no plan until the
    # configuration states its facts (here R1's, as a user would after reading its config.json)
    assert r.plan is None
    from kvlint.catalog import models

    r1 = models.lookup("deepseek-ai/DeepSeek-R1")
    assert r1 is not None
    models.register_models([{"id": "deepseek-ai/DeepSeek-R1-0528", "source": "test", "config": r1["config"]}])
    try:
        (r,) = run(path).deployments
    finally:
        models.register_models([])
    assert r.deployment.gpus.value == 10 and r.plan is not None


def test_kaito_inference_set_template_is_read_as_a_workspace():
    path = carried("kaito-project__kaito__examples__inference__kaito_inferenceset_llama-3.1_8b_instruct.yaml")
    result = run(path)
    (r,) = result.deployments
    d = r.deployment
    assert d.kind == "InferenceSet" and d.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert d.extra["replicas"].value == 2 and d.gpu.value == "a100-80gb-pcie" and r.plan is not None


# --- llmaz ------------------------------------------------------------------------------------------------------

LLMAZ = STACKS / "llmaz"


def test_llmaz_playground_runs_the_stock_backend_on_the_flavors_gpus():
    result = run(LLMAZ / "good-playground-sglang.yaml")
    (r,) = result.deployments
    d = r.deployment
    assert (
        d.engine.value == "sglang"
        and d.model.value == "Qwen/Qwen2-0.5B-Instruct"
        and d.model.where.line == 12
    )
    assert d.gpus.value == 1 and d.gpus_per_pod.where.line == 17  # the flavor's limits
    assert d.gpu.value == "l4"  # the flavor's nodeSelector
    assert d.max_context.value == 8192 and d.max_sequences.value == 16  # the Playground's own args
    assert d.has_shm and d.shm_size.origin == "default"  # stock sharedMemorySize 2Gi
    assert r.plan is not None and result.findings == [], [f.message for f in result.findings]


def test_llmaz_playground_args_beyond_the_flavors_gpus_are_kv201():
    result = run(LLMAZ / "bad-playground-tp-above-flavor.yaml")
    assert [(f.rule, f.severity.name) for f in result.findings] == [("KV201", "ERROR")]


def test_llmaz_tensorrt_llm_backend_without_a_stock_runtime_is_said():
    """TensorRT-LLM is modelled (its package claims llmaz's `tensorrt-llm` backend), but llmaz's stock
    runtime for it is not in kvlint's table: the Playground says so instead of calling the engine unmodelled."""
    path = carried("InftyAI__llmaz__docs__examples__tensorrt-llm__playground.yaml")
    (f,) = run(path).findings
    assert f.rule == "KV004"
    assert "llmaz backend tensorrt-llm runs TensorRT-LLM from llmaz's stock BackendRuntime" in f.message
    assert "does not model" not in f.message


@pytest.mark.parametrize("backend", ["llamacpp", "ollama"])
def test_llmaz_backends_of_a_modelled_engine_without_a_stock_runtime_say_so(tmp_path, backend):
    """llmaz names llama.cpp's and Ollama's runtimes `llamacpp` and `ollama` (the llama.cpp package says
    so): kvlint reads that engine, but not llmaz's stock runtime for it, so the Playground is not checked."""
    text = (
        (LLMAZ / "good-playground-sglang.yaml")
        .read_text()
        .replace("backendName: sglang", f"backendName: {backend}")
    )
    (tmp_path / "playground.yaml").write_text(text)
    (f,) = run(tmp_path / "playground.yaml").findings
    assert f.rule == "KV004"
    assert f"llmaz backend {backend} runs llama.cpp from llmaz's stock BackendRuntime" in f.message


# --- kthena ModelBooster -------------------------------------------------------------------------------------

KTHENA = STACKS / "kthena"


def test_kthena_model_booster_workers_run_vllm_with_their_config_as_flags():
    result = run(KTHENA / "modelbooster-vllm-pd.yaml")
    by = {r.deployment.name: r.deployment for r in result.deployments}
    assert set(by) == {"qwen-pd/prefill", "qwen-pd/decode"}
    d = by["qwen-pd/decode"]
    assert d.engine.value == "vllm" and d.model.value == "Qwen/Qwen3-0.6B" and d.model.where.line == 11
    assert d.max_context.value == 8192 and d.max_context.where.line == 35 and d.max_sequences.value == 32
    assert d.gpus.value == 1 and d.has_shm
    assert not [f for f in result.findings if f.severity.name in ("WARNING", "ERROR")]


def test_kthena_model_booster_config_underscores_are_flags_too():
    """utils/template.go ConvertVLLMArgsFromJson: tensor_parallel_size -> --tensor-parallel-size."""
    result = run(KTHENA / "bad-modelbooster-tp-above-gpus.yaml")
    (d,) = [r.deployment for r in result.deployments]
    assert d.tensor_parallel.value == 2
    assert [f.rule for f in result.findings if f.severity.name == "ERROR"] == ["KV201"]


def test_kthena_backend_types_it_does_not_convert_are_said(tmp_path):
    text = (KTHENA / "bad-modelbooster-tp-above-gpus.yaml").read_text().replace("type: vLLM", "type: MindIE")
    (tmp_path / "mb.yaml").write_text(text)
    (f,) = run(tmp_path / "mb.yaml").findings
    assert f.rule == "KV004" and "MindIE" in f.message


def test_llmaz_service_is_an_lws_group_whose_model_path_must_be_the_loaders(tmp_path):
    """llmaz Service: workloadTemplate is an LWS template (size 2); the command's /workspace/models/models--ORG--NAME
    is where llmaz's model loader puts a Hub model (modelhub.go ModelPath): the docs example names the 8B there
    while claiming the 405B OpenModel."""
    path = carried("InftyAI__llmaz__docs__examples__multi-nodes__service.yaml")
    result = run(path)
    (r,) = result.deployments
    d = r.deployment
    assert (
        d.engine.value == "sglang"
        and d.pods.value == 2
        and d.gpus.value == 2
        and d.tensor_parallel.value == 2
    )
    assert d.model.value == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.where.line == 43 and "meta-llama/Llama-3.1-405B" in f.message
    fixed = path.read_text().replace(
        "models--meta-llama--Meta-Llama-3.1-8B-Instruct", "models--meta-llama--Llama-3.1-405B"
    )
    (tmp_path / "svc.yaml").write_text(fixed)
    again = run(tmp_path / "svc.yaml")
    assert not [f for f in again.findings if f.rule == "KV005"]
    assert again.deployments[0].deployment.model.value == "meta-llama/Llama-3.1-405B"


def test_fix_never_edits_this_file_at_a_runtime_files_position(tmp_path):
    """A fix whose edit is located in the runtime beside the file is not applied to the file being fixed."""
    from kvlint.fix.files import fix_files
    from kvlint.run.lint import file_linter

    src = MULTI / "runtime-beside"
    (tmp_path / "isvc.yaml").write_text((src / "isvc.yaml").read_text())
    runtime = (src / "runtime.yaml").read_text()
    assert "- --max-num-seqs" in runtime
    (tmp_path / "runtime.yaml").write_text(
        runtime.replace("- --max-num-seqs", "- --gpu-memory-utilization=1.5\n        - --max-num-seqs", 1)
    )
    checked = run(tmp_path / "isvc.yaml")
    kv208 = [f for f in checked.findings if f.rule == "KV208"]
    assert kv208 and all(f.where.file.endswith("runtime.yaml") for f in kv208)
    settings = Settings()
    fixed = fix_files(
        [(str(tmp_path / "isvc.yaml"), str(tmp_path / "isvc.yaml"))],
        lambda path, shown: file_linter(settings, shown, path),
        settings.max_file_size,
        unsafe=True,
        write=False,
    )
    assert fixed.changed_files == 0


# --- CRD integer fields of the wrong type or range (review) ------------------------------------------------


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ('"2"', "'2' is not a whole number"),
        ("[2]", "(a list or map) is not a whole number"),
        ("2.5", "2.5 is not a whole number"),
        ("x", "'x' is not a whole number"),
        ("0", "0 is below 1"),
        ("-3", "-3 is below 1"),
        ("99999", "99999 is out of range"),
        ("", None),
    ],
)
def test_kserve_workerspec_size_that_is_not_a_whole_number_from_1_is_a_located_refusal(tmp_path, value, said):
    """workerSpec sizes are *int and KServe refuses one below 1 (validateMultiNodeVariables): kvlint said
    nothing for "2", [2], 2.5 or 1e30 (the default 1 was used instead) and three findings for -3 (two of
    them GPU / pod counts derived from it)."""
    (tmp_path / "runtime.yaml").write_text((MULTI / "multinode" / "runtime.yaml").read_text())
    isvc = (MULTI / "multinode" / "isvc.yaml").read_text()
    assert "      tensorParallelSize: 2\n" in isvc
    (tmp_path / "isvc.yaml").write_text(isvc.replace("tensorParallelSize: 2", f"tensorParallelSize: {value}"))
    result = run(tmp_path / "isvc.yaml")
    line = 1 + isvc.splitlines().index("      tensorParallelSize: 2")
    bad = [f for f in result.findings if "workerSpec.tensorParallelSize" in f.message]
    if said is None:  # null is left out: the runtime's size, else KServe's default 1
        assert not bad and result.deployments[0].in_force.tensor_parallel.value == 1
        return
    assert len(bad) == 1 and said in bad[0].message, [f.message for f in result.findings]
    assert (bad[0].rule, bad[0].where.file, bad[0].where.line) == ("KV005", str(tmp_path / "isvc.yaml"), line)
    assert not [f for f in result.findings if "GPU count" in f.message or "pods per replica" in f.message]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ('"2"', "'2' is not a whole number"),
        ("[2]", "(a list or map)"),
        ("-1", "-1 is below 0"),
        ("2.5", "2.5 is not"),
    ],
)
def test_kthena_worker_pods_of_the_wrong_type_are_a_located_kv005(tmp_path, value, said):
    """Pods is an int32 from 0 to 1,000,000 in kthena's CRD; a value of another type was ignored (one pod assumed)."""
    text = (KTHENA / "modelbooster-vllm-pd.yaml").read_text()
    first = text.index("        pods: 1\n")
    (tmp_path / "mb.yaml").write_text(
        text[:first] + f"        pods: {value}\n" + text[first + len("        pods: 1\n") :]
    )
    result = run(tmp_path / "mb.yaml")
    bad = [f for f in result.findings if "kthena worker pods" in f.message]
    assert len(bad) == 1 and said in bad[0].message and bad[0].rule == "KV005", [
        f.message for f in result.findings
    ]
    assert bad[0].where.line == 1 + text[:first].count("\n")
    prefill = next(r.deployment for r in result.deployments if r.deployment.name == "qwen-pd/prefill")
    assert prefill.pods is None and "pods" in prefill.unreadable


@pytest.mark.parametrize("quantity", ["[2]", "{count: 2}"])
@pytest.mark.parametrize("source", ["deployment", "llmaz flavor"])
def test_a_gpu_quantity_written_as_a_list_or_map_is_a_located_kv005(tmp_path, quantity, source):
    """A list or map where the GPU quantity belongs was dropped: the pod was read as asking for no
    count and planned as 1 GPU (a plain Deployment: a KV103 on the model, nothing on the quantity)."""
    if source == "deployment":
        text = (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
            "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n      containers:\n"
            "        - name: vllm\n          image: vllm/vllm-openai:v0.10.1\n"
            '          command: ["vllm", "serve", "Qwen/Qwen2-0.5B-Instruct", "--max-model-len", "8192"]\n'
            f"          resources:\n            limits:\n              nvidia.com/gpu: {quantity}\n"
        )
    else:
        good = (LLMAZ / "good-playground-sglang.yaml").read_text()
        assert good.count("nvidia.com/gpu: 1\n") == 1
        text = good.replace("nvidia.com/gpu: 1\n", f"nvidia.com/gpu: {quantity}\n")
    (tmp_path / "w.yaml").write_text(text)
    result = run(tmp_path / "w.yaml")
    line = 1 + text.splitlines().index(next(x for x in text.splitlines() if "nvidia.com/gpu:" in x))
    (f,) = [f for f in result.findings if "as a device count" in f.message]
    assert f.rule == "KV005" and f.where.line == line and "nvidia.com/gpu" in f.message
    # no GPU count is guessed: vLLM and SGLang run TP 1 whatever the pod has (Engine.sizes_from_gpu_count), so
    # their plan stands at their default TP, and nothing is said of idle or missing GPUs
    assert all(
        r.in_force.tensor_parallel is None or r.in_force.tensor_parallel.origin == "default"
        for r in result.deployments
        if r.plan is not None
    )
    assert all(r.plan is None or r.settings.tp == 1 for r in result.deployments)
    assert "KV201" not in [f.rule for f in result.findings]


def test_llmaz_stock_backend_is_named_as_a_default():
    """docs/inputs.md: with no BackendRuntime in the file or beside it, llmaz's stock one is used, "named as a
    default" - the engine it runs is reported among the defaults (JSON `defaults.engine`), not as stated."""
    (r,) = run(LLMAZ / "good-playground-sglang.yaml").deployments
    engine = r.deployment.engine
    assert engine.value == "sglang" and engine.origin == "default"
    assert "llmaz's stock BackendRuntime sglang" in engine.note and "default" in engine.note


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("g5.bogus", "g5.bogus is not in KAITO's SKU tables"),
        ("[Standard_NC24ads_A100_v4]", "(a list or map) is not a VM size name"),
        ("24", "24 is not a VM size name"),
        ("Standard_NC999_new", None),  # an Azure N-series name KAITO takes by pattern
    ],
)
def test_kaito_instance_type_the_webhook_refuses_is_a_located_kv005(tmp_path, value, said):
    """KAITO's webhook refuses a VM size outside its SKU tables that is no Azure N/D-series name
    (api/v1beta1/workspace_validation.go 'Unsupported instance type'); kvlint said only its KV004 info."""
    text = (KAITO / "workspace-preset.yaml").read_text()
    line = next(x for x in text.splitlines() if "instanceType:" in x)
    (tmp_path / "ws.yaml").write_text(text.replace(line, line.split(":")[0] + f": {value}"))
    result = run(tmp_path / "ws.yaml")
    bad = [f for f in result.findings if "resource.instanceType" in f.message]
    if said is None:
        assert not bad
        return
    (f,) = bad
    assert f.rule == "KV005" and f.severity.name == "WARNING" and said in f.message
    assert f.where.line == 1 + text.splitlines().index(line)
