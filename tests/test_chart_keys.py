"""What users get wrong in serving-stack charts and resources (issue 12 item 4): keys the stack does not read,
a GPU request left out, values the stack rejects. Key sets come from each stack's own published source,
named in the finding; fixtures in fixtures/KV005 and fixtures/stacks/<stack> follow the real layouts."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, lint, shared

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

STACKS = FIXTURES / "stacks"


def run(path: Path):
    result = read_and_lint(str(path), Settings(), path.name)
    assert not isinstance(result, str), result
    return result


def kv005(result) -> list[tuple[int, str]]:
    return sorted((f.where.line, f.message) for f in result.findings if f.rule == "KV005")


def warnings(result) -> list[str]:
    return [f"{f.rule}:{f.where.line}" for f in result.findings if f.severity.name in ("WARNING", "ERROR")]


# --- KubeAI ------------------------------------------------------------------------------------


def test_kubeai_model_fields_the_crd_lacks_and_a_profile_without_count():
    result = run(FIXTURES / "KV005" / "bad-kubeai-model-misplaced.yaml")
    found = kv005(result)
    assert [line for line, _ in found] == [16, 18, 19]
    d = result.deployments[0].deployment
    assert d.max_context is None or d.max_context.origin != "stated"  # misplaced maxModelLen not applied
    assert d.gpus_per_pod is None and "gpus_per_pod" in d.unreadable  # no count assumed
    assert d.gpu is not None and str(d.gpu.value) == "l4"  # the profile name still says the card


def test_kubeai_good_model_is_read_whole():
    result = run(FIXTURES / "KV005" / "good-kubeai-model.yaml")
    assert result.findings == []
    d = result.deployments[0].deployment
    assert (str(d.gpu.value), d.gpus_per_pod.value, d.max_context.value) == ("l4", 1, 8192)


def test_kubeai_missing_profile_is_no_pod_not_an_assumed_gpu():
    result = run(STACKS / "kubeai" / "bad-model-no-profile.yaml")
    assert warnings(result) == ["KV005:12"]  # "GPU type is not stated" only as an info beside it
    assert [f.severity.name for f in result.findings if f.rule == "KV002"] == ["INFO"]
    assert len(kv005(result)) == 1
    d = result.deployments[0].deployment
    assert d.gpus_per_pod is None and d.gpu is None


def test_kubeai_unknown_profile_names_the_closest_and_lower_case_engine_is_rejected():
    result = run(STACKS / "kubeai" / "bad-model-unknown-profile.yaml")
    found = kv005(result)
    assert [line for line, _ in found] == [12, 16]
    assert [f.fix for f in result.findings if f.where.line == 16] == [
        "write `resourceProfile: nvidia-gpu-a100-80gb:1`"
    ]


def test_kubeai_models_chart_keys_its_template_does_not_render():
    result = run(STACKS / "kubeai" / "bad-models-chart-misplaced-keys.yaml")
    found = kv005(result)
    assert [line for line, _ in found] == [12, 13, 18]
    d = result.deployments[0].deployment
    assert d.tensor_parallel is None or d.tensor_parallel.value == 1  # the misplaced TP is not applied


def test_kubeai_models_chart_good_catalog_has_no_kv005():
    result = run(STACKS / "kubeai" / "good-models-chart-catalog.yaml")
    assert kv005(result) == []
    d = result.deployments[0].deployment
    assert (d.tensor_parallel.value, d.gpus_per_pod.value) == (2, 2)


def test_kubeai_model_of_another_api_group_is_not_checked_against_kubeais_crd():
    result = lint(
        "apiVersion: example.com/v1\nkind: Model\nmetadata: {name: m}\n"
        "spec: {url: hf://Qwen/Qwen2.5-7B-Instruct, engine: VLLM, resourceProfile: nvidia-gpu-l4:1, foo: 1}\n"
    )
    assert kv005(result) == []


def test_kubeai_corpus_models_have_no_kv005():
    """Every real KubeAI Model and models-chart entry in the corpus uses the CRD's fields and real profiles."""
    for folder in ("manifests", "manifests2"):
        for path in sorted(shared("corpus", folder).glob("substratusai__kubeai__*.yaml")):
            assert kv005(run(path)) == [], path.name


# --- llm-d modelservice ------------------------------------------------------------------------


def test_llmd_keys_the_chart_does_not_read_name_where_it_does():
    result = run(FIXTURES / "KV005" / "bad-llmd-modelservice-misplaced.yaml")
    found = kv005(result)
    assert [line for line, _ in found] == [16, 17, 18]
    d = result.deployments[0].deployment
    assert d.tensor_parallel is None or d.tensor_parallel.value == 1  # the misplaced tp is not applied
    assert d.gpus_per_pod.value == 1


def test_llmd_gpu_request_left_out_is_the_charts_tensor_times_data_local():
    result = run(FIXTURES / "KV005" / "good-llmd-modelservice.yaml")
    assert result.findings == []
    d = result.deployments[0].deployment
    assert d.gpus_per_pod.value == 1 and d.gpus_per_pod.origin == "inferred"
    assert "parallelism.dataLocal 1 x tensor 1" in d.gpus_per_pod.note


def test_llmd_top_level_and_container_keys(tmp_path):
    text = (FIXTURES / "KV005" / "good-llmd-modelservice.yaml").read_text()
    text = text.replace("multinode: false\n", "multinode: false\nmodel: Qwen/Qwen3-8B\n")
    text = text.replace("    modelCommand: vllmServe\n", "    modelCommand: vllmServe\n    gpus: 2\n")
    text = text.replace("  size: 20Gi\n", "  size: 20Gi\n  id: Qwen/Qwen3-8B\n")
    result = lint(text, "values.yaml")
    found = [m for _, m in kv005(result)]
    assert len(found) == 3
    assert "`model`" in found[0] and "modelArtifacts.uri" in found[0]
    assert "`modelArtifacts.id`" in found[1] and "helm install fails" in found[1]
    assert "`decode.containers[0].gpus`" in found[2] and "resources.limits" in found[2]


def test_llmd_corpus_values_have_no_kv005():
    for path in sorted(shared("corpus", "manifests2").glob("llm-d-incubation__llm-d-modelservice__*.yaml")):
        assert kv005(run(path)) == [], path.name


# --- vLLM production-stack: servingEngineSpec, vllmConfig, lmcacheConfig --------------------------


def test_production_stack_nested_keys_the_chart_does_not_render():
    result = run(FIXTURES / "KV005" / "bad-production-stack-nested-keys.yaml")
    found = kv005(result)
    assert [line for line, _ in found] == [10, 30, 32]
    d = result.deployments[0].deployment
    assert (
        d.max_batched_tokens is None or d.max_batched_tokens.origin != "stated"
    )  # not rendered, not applied


def test_production_stack_vllm_option_in_extra_args_is_read():
    result = run(FIXTURES / "KV005" / "good-production-stack-nested-keys.yaml")
    assert result.findings == []
    d = result.deployments[0].deployment
    assert d.max_batched_tokens.value == 8192 and d.max_batched_tokens.origin == "stated"


def test_production_stack_pipeline_parallel_is_rendered_only_with_ray():
    text = (FIXTURES / "KV005" / "good-production-stack-nested-keys.yaml").read_text()
    plain = text.replace(
        "      maxModelLen: 8192\n", "      maxModelLen: 8192\n      pipelineParallelSize: 2\n"
    )
    found = kv005(lint(plain, "values.yaml"))
    assert len(found) == 1 and "only for a raySpec entry" in found[0][1]
    assert lint(plain, "values.yaml").deployments[0].in_force.pipeline_parallel.value == 1  # vLLM default
    ray = plain.replace("    requestGPU: 1\n", "    requestGPU: 1\n    raySpec:\n      enabled: true\n")
    result = lint(ray, "values.yaml")
    assert kv005(result) == []
    assert result.deployments[0].in_force.pipeline_parallel.value == 2


# --- NVIDIA NIM nim-llm chart ------------------------------------------------------------------


def test_nim_num_gpus_is_no_gpu_request_and_the_gpu_left_out_is_the_charts_one():
    result = run(STACKS / "nim" / "bad-nim-llm-num-gpus-and-probes.yaml")
    found = kv005(result)
    assert [line for line, _ in found] == [16, 20]
    d = result.deployments[0].deployment
    assert d.gpus_per_pod.value == 1 and d.gpus_per_pod.origin == "default"
    assert "nvidia.com/gpu: 1" in d.gpus_per_pod.note
    assert str(d.gpu.value).startswith("h100")  # the node selector's real product label


def test_nim_good_values_are_planned_under_a_published_profile():
    result = run(STACKS / "nim" / "good-nim-llm.yaml")
    assert [f.rule for f in result.findings] == ["KV103"]  # the engine-default limits' info
    r = result.deployments[0]
    assert r.deployment.gpus_per_pod.value == 4 and r.deployment.gpus_per_pod.origin == "stated"
    assert r.plan is not None and r.settings.tp == 4  # the profile that uses the 4 GPUs


def test_nim_gpu_label_no_node_carries_is_a_warning():
    text = (
        (STACKS / "nim" / "good-nim-llm.yaml")
        .read_text()
        .replace("NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-80GB")
    )
    result = lint(text, "values.yaml")
    (f,) = [f for f in result.findings if f.rule == "KV002"]
    assert (
        f.severity.name == "WARNING"
        and "no node carries" in f.message
        and "NVIDIA-H100-80GB-HBM3" in f.message
    )


# --- AIBrix labels -------------------------------------------------------------------------------


def test_aibrix_model_label_missing_on_pods_and_an_unread_label_key():
    result = run(FIXTURES / "KV005" / "bad-aibrix-labels.yaml")
    found = kv005(result)
    assert [line for line, _ in found] == [10, 22]


def test_aibrix_labels_on_the_pod_template_are_clean():
    assert run(FIXTURES / "KV005" / "good-aibrix-labels.yaml").findings == []


def test_aibrix_name_only_on_a_crds_own_labels_is_not_flagged():
    """A CRD's controller may copy its labels to the pods; only plain workloads are held to the pod label."""
    text = (FIXTURES / "KV005" / "bad-aibrix-labels.yaml").read_text()
    text = text.replace("kind: Deployment", "kind: StormServiceLike").replace("metrics-port", "metric-port")
    assert kv005(lint(text, "x.yaml")) == []


def test_aibrix_corpus_files_have_no_label_kv005():
    for folder in ("manifests", "manifests2"):
        for path in sorted(shared("corpus", folder).glob("vllm-project__aibrix__*")):
            assert not [m for _, m in kv005(run(path)) if "aibrix" in m], path.name


# --- GPU node labels no node carries, on every reader ----------------------------------------------


@pytest.mark.parametrize(
    "name, line",
    [
        ("bad-vllmruntime-gpu-label.yaml", 17),
        ("bad-nimservice-gpu-label.yaml", 11),
        ("bad-rayservice-llm-worker-gpu-label.yaml", 26),
    ],
)
def test_gpu_label_no_node_carries_is_a_warning_naming_the_real_value(name, line):
    result = run(STACKS / "node-labels" / name)
    (f,) = [f for f in result.findings if f.rule == "KV002" and "no node carries" in f.message]
    assert f.severity.name == "WARNING" and f.where.line == line
    assert "NVIDIA-L4," in f.message or "nvidia-l4," in f.message


@pytest.mark.parametrize(
    "text",
    [
        "servingEngineSpec:\n  modelSpec:\n  - name: a\n    repository: vllm/vllm-openai\n    tag: v0.10.1\n"
        "    modelURL: Qwen/Qwen2.5-7B-Instruct\n    requestGPU: 1\n    nodeSelectorTerms:\n    - matchExpressions:\n"
        "      - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4X]}\n",
        "modelArtifacts: {uri: hf://Qwen/Qwen3-8B}\ndecode:\n  replicas: 1\n  acceleratorTypes: "
        "{labelKey: nvidia.com/gpu.product, labelValues: [NVIDIA-L4X]}\n  containers:\n"
        "  - {name: vllm, image: 'ghcr.io/llm-d/llm-d-cuda:v0.3.0', modelCommand: vllmServe}\n",
        "image: {repository: nvcr.io/nim/meta/llama-3.1-8b-instruct, tag: 1.3.3}\n"
        "model: {name: meta/llama-3.1-8b-instruct, ngcAPISecret: ngc-api}\n"
        "nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4X}\n",
        "LLM_MODEL_ID: Qwen/Qwen2.5-7B-Instruct\nextraCmdArgs: ['--max-model-len', '4096']\n"
        "image: {repository: opea/vllm, tag: latest}\nresources:\n  limits: {nvidia.com/gpu: 1}\n"
        "nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4X}\n",
    ],
    ids=["production-stack", "llm-d-modelservice", "nim-llm", "opea-vllm"],
)
def test_chart_readers_check_gpu_labels(text):
    result = lint(text, "values.yaml")
    assert [f.severity.name for f in result.findings if "no node carries" in f.message] == ["WARNING"]


def test_kubeai_chart_profile_label_and_unread_profile_key():
    result = run(FIXTURES / "KV002" / "bad-kubeai-profile-gke-label.yaml")
    (f,) = result.findings
    assert (f.rule, f.where.line, f.severity.name) == (
        "KV002",
        8,
        "WARNING",
    ) and "closest real value: nvidia-l4" in f.message
    text = "resourceProfiles:\n  nvidia-gpu-l4:\n    gpus: 1\n    limits: {nvidia.com/gpu: '1'}\n"
    (g,) = lint(text, "values.yaml").findings
    assert (
        g.rule == "KV005"
        and "resourceProfiles.nvidia-gpu-l4.gpus" in g.message
        and "KubeAI ignores it" in g.message
    )


def test_kubeai_chart_corpus_values_are_clean():
    for name in ("substratusai__kubeai__charts__kubeai__values.yaml",):
        assert run(shared("corpus", "manifests", name)).findings == []
    assert (
        run(shared("corpus", "manifests2", "substratusai__kubeai__charts__kubeai__values-gke.yaml")).findings
        == []
    )


def test_vllmruntime_fields_the_crd_lacks():
    result = run(STACKS / "production-stack" / "bad-vllmruntime-misplaced.yaml")
    found = kv005(result)
    assert [line for line, _ in found] == [17, 27]
    d = result.deployments[0].deployment
    assert d.max_sequences is None or d.max_sequences.origin != "stated"


def test_vllmruntime_corpus_samples_are_clean():
    for folder, name in (
        (
            "manifests",
            "vllm-project__production-stack__operator__config__samples__production-stack_v1alpha1_vllmruntime.yaml",
        ),
        (
            "manifests2",
            "vllm-project__production-stack__operator__config__samples__production-stack_v1alpha1_vllmruntime_autoscaling.yaml",
        ),
    ):
        assert kv005(run(shared("corpus", folder, name))) == []


def test_llmd_gpu_limit_without_request_differs_from_what_the_chart_fills():
    text = (FIXTURES / "KV005" / "good-llmd-modelservice.yaml").read_text()
    text = text.replace(
        "    volumeMounts:\n",
        "    resources:\n      limits:\n        nvidia.com/gpu: 2\n    volumeMounts:\n",
        1,
    )
    found = [m for _, m in kv005(lint(text, "values.yaml"))]
    assert len(found) == 1 and "fills requests with parallelism.dataLocal x tensor = 1" in found[0]
    same = text.replace("    tensor: 1\n", "    tensor: 2\n")
    assert kv005(lint(same, "values.yaml")) == []  # the chart's request then equals the limit
    dra = text.replace("multinode: false\n", "multinode: false\naccelerator:\n  dra: true\n")
    assert kv005(lint(dra, "values.yaml")) == []  # DRA mode passes resources through as written
    role = text.replace("  create: true\n", "  create: true\n  accelerator:\n    dra: true\n", 1)
    assert kv005(lint(role, "values.yaml")) == []  # decode.accelerator is a key the chart reads


def test_a_key_the_stack_ignores_does_not_stop_the_fit_verdict():
    """A misplaced key is not applied, so the deployed configuration is known: the usual-GPU fit verdict
    (KV002 info) still runs beside the KV005; a value kvlint cannot read (a $(VAR)) would stop it."""
    text = (
        "servingEngineSpec:\n  modelSpec:\n  - name: a\n    repository: vllm/vllm-openai\n    tag: v0.10.1\n"
        "    modelURL: Qwen/Qwen2.5-7B-Instruct\n    requestGPU: 1\n    replicas: 2\n"
        "    vllmConfig: {maxModelLen: 4096, maxNumSeqs: 4}\n"
    )
    result = lint(text, "values.yaml")
    assert [f.rule for f in result.findings if f.severity.name == "WARNING"] == ["KV005"]
    (kv002,) = [f for f in result.findings if f.rule == "KV002"]
    assert kv002.severity.name == "INFO" and "fits on" in kv002.message


@pytest.mark.parametrize(
    "uri, said",
    [("Qwen/Qwen3-8B", "renders no model argument"), ("oci://registry/qwen3:8b", "oci:// not implemented")],
)
def test_llmd_model_uri_without_a_scheme_the_chart_knows(uri, said):
    text = (FIXTURES / "KV005" / "good-llmd-modelservice.yaml").read_text().replace("hf://Qwen/Qwen3-8B", uri)
    result = lint(text, "values.yaml")
    assert [f.rule for f in result.findings if f.severity.name == "WARNING"] == ["KV005"]
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert said in f.message and f.where.line == 8
    assert result.deployments[0].deployment.model is None  # the chart passes no model to vLLM


def test_nim_nested_section_keys():
    text = (
        STACKS / "nim" / "good-nim-llm.yaml"
    ).read_text() + "service:\n  type: LoadBalancer\n  port: 8000\n"
    found = [m for _, m in kv005(lint(text, "values.yaml"))]
    assert len(found) == 1 and "`service.port`" in found[0] and "`service.openaiPort`" in found[0]


@pytest.mark.parametrize(
    "edit, said",
    [
        (
            ("modelCommand: vllmServe", "modelCommand: vllm-serve"),
            "is not one the llm-d-modelservice chart takes",
        ),
        (
            ("    modelCommand: vllmServe\n", ""),
            "left out (custom by default) and the container has no `command`",
        ),
    ],
)
def test_llmd_model_command_the_chart_refuses(edit, said):
    text = (FIXTURES / "KV005" / "good-llmd-modelservice.yaml").read_text().replace(*edit)
    result = lint(text, "values.yaml")
    assert [f.rule for f in result.findings] == ["KV005"]
    assert said in result.findings[0].message and "helm install fails" in result.findings[0].message
