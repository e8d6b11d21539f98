"""Serving stacks read by their own semantics (issue 12): NVIDIA Dynamo, llm-d-modelservice values,
Ray Serve LLM configs, docker compose. Fixtures in fixtures/stacks/ follow the real layouts; the
corpus tests read the real files in ../shared/corpus in place, or their excerpts under tests/data/corpus
(`carried`: the lines of the published file a test reads, so it runs on a bare clone)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, carried, lint, shared

from kvlint.run.lint import read_and_lint
from kvlint.run.settings import Settings

STACKS = FIXTURES / "stacks"


def run(path: Path, name: str | None = None):
    result = read_and_lint(str(path), Settings(), name or path.name)
    assert not isinstance(result, str), result
    return result


def deps(result):
    return {d.deployment.name: d.deployment for d in result.deployments}


def rules(result) -> set[str]:
    return {f.rule for f in result.findings}


def corpus2(name: str) -> Path:
    return shared("corpus", "manifests2", name)


# --- NVIDIA Dynamo ----------------------------------------------------------------------------


def test_dynamo_workers_are_workloads_and_the_frontend_is_not():
    result = run(STACKS / "dynamo" / "good-vllm-disagg.yaml")
    found = deps(result)
    assert set(found) == {"vllm-disagg/VllmDecodeWorker", "vllm-disagg/VllmPrefillWorker"}
    d = found["vllm-disagg/VllmDecodeWorker"]
    assert d.engine.value == "vllm" and d.model.value == "Qwen/Qwen3-0.6B"
    assert d.gpus_per_pod.value == 1 and d.gpus_per_pod.where.line == 20  # resources.limits.gpu
    assert d.max_context.value == 8192 and d.extra["replicas"].value == 2
    assert d.extra["role"].value == "decode"
    assert d.has_shm and d.shm_size.origin == "default" and "8Gi" in str(d.shm_size.value)
    assert all(r.plan is not None for r in result.deployments)
    assert result.findings == [], [f.message for f in result.findings]  # --is-decode-worker is Dynamo's


def test_dynamo_tp_above_the_pod_gpus_is_kv201():
    result = run(STACKS / "dynamo" / "bad-sglang-tp-above-gpus.yaml")
    assert rules(result) == {"KV201"}
    (f,) = result.findings
    assert f.where.line == 31


def test_dynamo_real_sglang_multinode_spans_two_pods():
    result = run(carried("ai-dynamo__dynamo__examples__backends__sglang__deploy__disagg-multinode.yaml"))
    found = deps(result)
    assert set(found) == {"sglang-disagg-multinode/decode", "sglang-disagg-multinode/prefill"}
    for d in found.values():
        assert d.engine.value == "sglang" and d.model.value == "Qwen/Qwen3-0.6B"
        assert (d.tensor_parallel.value, d.gpus_per_pod.value, d.pods.value, d.gpus.value) == (8, 4, 2, 8)
        assert float(d.extra["mem_fraction_static"].value) == 0.82
    assert "KV201" not in rules(result) and "KV005" not in rules(result)


def test_dynamo_real_trtllm_is_read_with_its_model_and_options_file():
    result = run(carried("ai-dynamo__dynamo__recipes__gpt-oss-120b__trtllm__agg__deploy.yaml"))
    (d,) = deps(result).values()
    assert d.engine.value == "trtllm" and "gpt-oss-120b" in str(d.model.value)
    assert d.gpus_per_pod.value == 4 and d.shm_size.value == "80Gi"
    # Dynamo's flags (TP 4, --free-gpu-memory-fraction 0.9) and the ConfigMap's LLM-API YAML are read; the model
    # is a Hugging Face cache path on a PVC (models--openai--gpt-oss-120b/snapshots/...), read as its Hub id; the
    # GPU type is not stated (KV002, an info: the fleet check says where it fits)
    assert d.tensor_parallel.value == 4 and d.gpu_memory_utilization.value == 0.9
    (r,) = result.deployments
    assert r.model is not None and r.model.id == "openai/gpt-oss-120b"
    assert "read from its Hugging Face cache path" in r.model_how
    assert [(f.rule, f.severity.name) for f in result.findings] == [("KV002", "INFO")]


def test_dynamo_shell_exports_feed_the_engine_flags():
    name = "vllm-project__aibrix__brixbench__benchmark__testdata__deployments__dynamo__qwen3-8b-round-robin-4p4d-multinode.yaml"
    result = run(carried(name))
    found = deps(result)
    assert set(found) == {"vllm-dynamo/VllmDecodeWorker", "vllm-dynamo/VllmPrefillWorker"}
    d = found["vllm-dynamo/VllmDecodeWorker"]
    assert d.model.value == "/models/Qwen3-8B" and d.max_context.value == 16384
    assert d.gpu_memory_utilization.value == 0.9 and d.extra["replicas"].value == 4


# --- llm-d-modelservice -----------------------------------------------------------------------


def test_llmd_chart_renders_model_tp_and_gpus():
    result = run(STACKS / "llm-d" / "good-pd.yaml")
    found = deps(result)
    assert set(found) == {"decode", "prefill"}
    d = found["decode"]
    assert d.model.value == "Qwen/Qwen3-8B" and d.tensor_parallel.value == 2
    assert d.gpus_per_pod.value == 2 and d.gpus_per_pod.origin == "inferred"
    assert "dataLocal" in d.gpus_per_pod.note and d.gpu.value == "l4"
    assert found["prefill"].gpus_per_pod.value == 1
    assert result.findings == [], [f.message for f in result.findings]


def test_llmd_written_gpu_limit_wins_and_tp_above_it_is_kv201():
    result = run(STACKS / "llm-d" / "bad-tp-above-limit.yaml")
    assert "KV201" in rules(result)
    assert deps(result)["decode"].gpus_per_pod.origin == "stated"


def test_llmd_google_accelerator_requests_tpu_chips_and_is_planned_on_them():
    # values.yaml accelerator.resources google: google.com/tpu (llm-d-modelservice@024c0f2d); TP 4 fills 4 chips
    result = run(STACKS / "llm-d" / "good-tpu.yaml")
    d = deps(result)["decode"]
    assert d.accelerator == "tpu" and d.gpus_per_pod.value == 4 and d.gpus_per_pod.origin == "inferred"
    assert result.findings == [], [f.message for f in result.findings]
    text = (STACKS / "llm-d" / "good-tpu.yaml").read_text()
    gaudi = lint(text.replace("type: google", "type: intel-gaudi"))
    assert [f.rule for f in gaudi.findings] == ["KV004"] and "Intel Gaudi" in gaudi.findings[0].message


def test_llmd_real_values_files():
    pd = run(carried("llm-d-incubation__llm-d-modelservice__examples__values-pd.yaml"))
    found = deps(pd)
    assert {d.model.value for d in found.values()} == {"facebook/opt-125m"}
    assert all(d.gpus_per_pod.value == 1 for d in found.values())
    assert "KV004" not in rules(pd)  # the uri's {{ .Values… }} is rendered by the chart, not unrendered YAML
    xpu = run(carried("llm-d-incubation__llm-d-modelservice__examples__values-xpu-pd.yaml"))
    assert [f.rule for f in xpu.findings] == ["KV004", "KV004"]
    default = run(carried("llm-d-incubation__llm-d-modelservice__charts__llm-d-modelservice__values.yaml"))
    assert default.deployments == [] and default.findings == []  # the simulator image serves no model


# --- Ray Serve LLM ----------------------------------------------------------------------------


def test_ray_serve_plain_llm_config():
    result = run(STACKS / "ray-serve" / "good-llm-config.yaml")
    (d,) = deps(result).values()
    assert d.model.value == "Qwen/Qwen3-8B" and d.gpu.value == "L4" and d.max_sequences.value == 2
    assert d.extra["replicas"].value == 2 and result.deployments[0].plan is not None
    assert result.findings == []


def test_ray_serve_prefill_decode_and_unknown_engine_kwarg():
    result = run(STACKS / "ray-serve" / "bad-pd-unknown-kwarg.yaml")
    assert set(deps(result)) == {"Qwen/Qwen3-8B/prefill", "Qwen/Qwen3-8B/decode"}
    kv005 = [f for f in result.findings if f.rule == "KV005"]
    assert len(kv005) == 1 and "--max-seqs" in kv005[0].message and kv005[0].where.line == 20


def test_ray_serve_real_configs():
    dp = run(
        carried("ray-project__ray__release__llm_tests__serve__configs__serve_phi_tiny_moe_dp4_gang.yaml")
    )
    (d,) = deps(dp).values()
    assert (d.data_parallel.value, d.max_context.value, d.max_sequences.value) == (4, 1024, 32)
    assert d.enforce_eager.value is True and d.extra["replicas"].value == 2
    one = run(
        carried(
            "ray-project__ray__release__llm_tests__serve__configs__model_config__llama_3dot1_8b_quantized_tp1.yaml"
        )
    )
    (d,) = deps(one).values()
    assert d.gpu.value == "A10G" and d.max_context.value == 8192 and d.extra["VLLM_USE_V1"].value == "1"


def test_rayservice_whose_model_is_chosen_in_code_is_kv004():
    result = lint(
        """
apiVersion: ray.io/v1
kind: RayService
metadata: {name: llm}
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: my_app.serve:deployment
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, image: rayproject/ray:2.49.0}]
    workerGroupSpecs:
      - groupName: gpu
        template:
          spec:
            containers:
              - name: worker
                image: rayproject/ray:2.49.0
                resources: {limits: {nvidia.com/gpu: 1}}
"""
    )
    (f,) = [f for f in result.findings if f.rule == "KV004"]
    assert "application code" in f.message and "my_app.serve:deployment" in f.message and f.where.line == 9


# --- docker compose ---------------------------------------------------------------------------


def test_compose_tgi_service_read_with_defaults_interpolated():
    result = run(STACKS / "compose" / "good-tgi.yaml")
    (d,) = deps(result).values()
    assert d.engine.value == "tgi" and d.model.value == "Qwen/Qwen3-8B"
    assert d.gpus_per_pod.value == 1 and d.max_context.value == 8192 and d.max_sequences.value == 2
    assert d.has_shm and d.shm_size.value == "1g"
    assert rules(result) == {"KV002"}  # compose cannot say which GPU


def test_compose_count_all_and_docker_default_shm():
    result = run(STACKS / "compose" / "bad-vllm-count-all.yaml")
    assert {"KV005", "KV207"} <= rules(result)
    kv005 = next(f for f in result.findings if f.rule == "KV005")
    assert kv005.where.line == 14


# docker compose files as OPEA's ChatQnA (docker_compose/intel/hpu/gaudi), SGLang's docker/ dev shells and
# vLLM's Prometheus/Grafana example write them (the real files are pinned in tests/data/corpus_findings.yaml)
COMPOSE_UNSET = """services:
  vllm-service:
    image: opea/vllm-gaudi:1.22.0
    ports: ["8007:80"]
    environment:
      HABANA_VISIBLE_DEVICES: all
      LLM_MODEL_ID: ${LLM_MODEL_ID}
      NUM_CARDS: ${NUM_CARDS}
    runtime: habana
    command: --model ${LLM_MODEL_ID} --tensor-parallel-size ${NUM_CARDS} --port 80 --max-num-seqs 256
  backend-server:
    image: opea/chatqna:latest
    environment:
      - LLM_SERVER_HOST_IP=vllm-service
      - LLM_MODEL=${LLM_MODEL_ID}
"""
COMPOSE_DEV_SHELL = """services:
  sglang-dev:
    build:
      context: ..
      dockerfile: docker/Dockerfile
      args:
        - CUDA_VERSION=${CUDA_VERSION:-12.6.1}
    image: sglang:${CUDA_VERSION:-12.6.1}
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: all, capabilities: [gpu]}]
    volumes:
      - ${HOST_MODELS:-./models}:/models
    environment:
      - CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-all}
    stdin_open: true
    tty: true
"""
COMPOSE_MONITORING = """services:
  prometheus:
    image: prom/prometheus:latest
    ports: ["9090:9090"]
    volumes: ["${PWD}/prometheus.yaml:/etc/prometheus/prometheus.yml"]
  grafana:
    image: grafana/grafana:latest
    depends_on: [prometheus]
    ports: ["3000:3000"]
"""


def test_compose_unset_variable_is_said_not_read_as_a_model():
    """Compose fills ${LLM_MODEL_ID} from the shell or a .env (none here): a placeholder named in a KV004
    info, not a KV005 about the container."""
    result = lint(COMPOSE_UNSET, "compose.yaml")
    messages = [f.message for f in result.findings if f.rule == "KV004"]
    assert any("${LLM_MODEL_ID}" in m for m in messages)
    assert "KV005" not in {f.rule for f in result.findings}
    assert all(
        d.deployment.model is None or "$" not in str(d.deployment.model.value) for d in result.deployments
    )


def test_compose_dev_shells_and_monitoring_are_quiet():
    for name, text in (("dev shell", COMPOSE_DEV_SHELL), ("monitoring", COMPOSE_MONITORING)):
        result = lint(text, "docker-compose.yaml")
        assert result.deployments == [] and result.findings == [], name


@pytest.mark.parametrize("path", sorted(STACKS.glob("*/*.yaml")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stack_fixtures_are_read(path):
    result = run(path)
    assert result.deployments, f"{path.name}: no workload read"
    if path.name.startswith("bad"):
        assert result.findings


# --- KServe LLMInferenceService ---------------------------------------------------------------


def test_llmisvc_reads_vllm_additional_args_parallelism_and_the_preset_shm():
    result = run(STACKS / "kserve-llm" / "good-pd.yaml")
    found = deps(result)
    d = found["qwen3-8b-pd"]
    assert (d.tensor_parallel.value, d.gpus_per_pod.value, d.max_context.value, d.max_sequences.value) == (
        2,
        2,
        8192,
        4,
    )
    assert d.max_context.where.line == 23  # inside the VLLM_ADDITIONAL_ARGS string
    assert d.has_shm and d.shm_size.origin == "default" and "config-llm-template" in d.shm_size.note
    p = found["qwen3-8b-pd/prefill"]
    in_force = next(r.in_force for r in result.deployments if r.deployment is p)
    assert p.tensor_parallel is None and in_force.tensor_parallel.origin == "default"  # vLLM's, beside it
    assert p.gpus_per_pod.value == 1 and p.max_sequences.value == 2
    assert result.findings == [], [f.message for f in result.findings]


def test_llmisvc_data_parallel_pods_and_kv201():
    result = run(STACKS / "kserve-llm" / "bad-dp-above-gpus.yaml")
    (d,) = deps(result).values()
    assert (d.data_parallel.value, d.pods.value, d.gpus.value) == (
        16,
        2,
        8,
    ) and d.expert_parallel.value is True
    assert rules(result) == {"KV201"}


def test_llmisvc_real_files():
    dp = run(
        carried(
            "kserve__kserve__docs__samples__llmisvc__dp-ep__deepseek-r1-gpu-rdma-roce__llm-inference-service-dp-ep-deepseek-r1-gpu-deepep-ht.yaml"
        )
    )
    (d,) = deps(dp).values()
    assert (d.data_parallel.value, d.gpus.value, d.max_context.value) == (32, 32, 8192)
    assert d.gpu_memory_utilization.value == 0.95 and d.enforce_eager.value is True
    cpu = run(
        carried(
            "kserve__kserve__docs__samples__llmisvc__opt-125m-cpu__llm-inference-service-pd-facebook-opt-125m-cpu.yaml"
        )
    )
    assert [f.rule for f in cpu.findings] == ["KV004", "KV004"]


# --- vLLM's Ray backend outside a Ray cluster; kthena pod groups ------------------------------


def test_ray_backend_in_a_plain_deployment_adds_no_gpus():
    result = run(FIXTURES / "KV201" / "bad-ray-backend-plain-deployment.yaml")
    (d,) = deps(result).values()
    assert d.pods is None and d.gpus.value == 2  # no pods inferred from the Ray backend
    (f,) = result.findings
    assert f.rule == "KV201" and "no Ray cluster" in f.message and f.where.line == 29
    assert run(FIXTURES / "KV201" / "good-ray-backend-in-pod.yaml").findings == []


def test_kthena_role_is_entry_pod_plus_worker_replicas():
    result = run(
        carried(
            "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-serving__vllm-pd-multinode.yaml"
        )
    )
    for d in deps(result).values():
        assert d.pods.value == 2 and "workerReplicas" in d.pods.note
        assert d.pipeline_parallel.value == 2 and d.gpus.value == 2
    assert "KV201" not in rules(result)


# --- Shell arithmetic and LeaderWorkerSet's own variables --------------------------------------

WIDE_EP_LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: wide-ep
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        nodeSelector:
          amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM
        containers:
          - name: vllm
            image: vllm/vllm-openai:v0.11.0
            command: ["/bin/bash", "-c"]
            args:
              - |-
                START_RANK=$(( ${LWS_WORKER_INDEX} * DP_SIZE_LOCAL ))
                exec vllm serve \\
                  deepseek-ai/DeepSeek-V3 \\
                  --enable-expert-parallel \\
                  --tensor-parallel-size $TP_SIZE \\
                  --data-parallel-size $((LWS_GROUP_SIZE * DP_SIZE_LOCAL)) \\
                  --data-parallel-size-local $DP_SIZE_LOCAL \\
                  --data-parallel-start-rank $START_RANK \\
                  --max-model-len 32768
            env:
              - name: DP_SIZE_LOCAL
                value: "8"
              - name: TP_SIZE
                value: "1"
            resources:
              limits:
                amd.com/gpu: "8"
"""


def test_lws_group_size_and_shell_arithmetic_give_the_data_parallel_size():
    """llm-d's wide-EP guide: DP = $((LWS_GROUP_SIZE * DP_SIZE_LOCAL)) = 2 pods x 8 = 16 ranks on 16
    GPUs, each holding 1/16 of DeepSeek-V3's experts: no KV201 (idle GPUs), no KV101 on an MI300X."""
    result = lint(WIDE_EP_LWS)
    d = result.deployments[0].deployment
    assert result.deployments[0].gpu is not None and result.deployments[0].plan is not None
    assert d.data_parallel is not None and d.data_parallel.value == 16
    assert d.data_parallel.where is not None and d.data_parallel.where.line == 24
    assert not {"KV005", "KV201", "KV101"} & rules(result), [f.message for f in result.findings]
    broken = WIDE_EP_LWS.replace(
        'value: "8"\n              - name: TP_SIZE', "value: x\n              - name: TP_SIZE"
    )
    assert "KV005" in rules(lint(broken))  # a value that is not a number: unread, said so


# --- KServe InferenceService on a ServingRuntime ----------------------------------------------

KSERVE = STACKS / "kserve-isvc"


def test_kserve_runtime_in_the_same_file_merges_into_the_predictor():
    result = run(KSERVE / "same-file" / "good-vllm-runtime.yaml")
    (d,) = deps(result).values()  # the runtime is read as part of the InferenceService, not again
    assert d.name == "qwen-7b" and d.engine.value == "vllm"
    assert (
        d.model.value == "Qwen/Qwen2.5-7B-Instruct" and "storageUri" in d.model.note
    )  # --model /mnt/models/
    assert d.max_context.value == 6144 and d.max_context.where.line == 19  # the runtime's arg
    assert d.max_sequences.value == 4 and d.max_sequences.where.line == 53  # the predictor's, appended
    assert d.shm_size.value == "2Gi" and d.shm_size.where.line == 37  # the runtime's volume
    assert d.gpus.value == 1 and d.gpu.value == "l4" and d.memory_limit.value == "24Gi"
    assert result.findings == [], [f.message for f in result.findings]


def test_kserve_predictor_args_come_after_the_runtime_args():
    result = run(KSERVE / "same-file" / "bad-tp-above-gpus.yaml")
    (f,) = result.findings
    assert f.rule == "KV201" and f.where.line == 54


def test_kserve_runtime_in_a_file_beside_is_merged():
    result = run(KSERVE / "runtime-beside" / "isvc.yaml")
    (d,) = deps(result).values()
    assert d.model.value == "meta-llama/Llama-3.1-8B-Instruct" and d.tensor_parallel.value == 2
    assert d.max_context.value == 8192 and d.max_sequences.value == 8  # from runtime.yaml
    assert d.has_shm and d.shm_size.value == "2Gi"  # runtime.yaml's /dev/shm: no KV207
    assert "runtime.yaml" in d.extra["runtime"].value
    # a value the runtime states is located at the runtime file's own line (issue 12), not this file's
    assert d.max_context.where.file.endswith("runtime.yaml") and d.max_context.where.line == 16
    assert result.findings == [], [f.message for f in result.findings]


def test_kserve_runtime_beside_is_not_read_from_stdin():
    from kvlint.run.lint import lint_text

    data = (KSERVE / "runtime-beside" / "isvc.yaml").read_bytes()
    result = lint_text(data, "<stdin>", Settings(), str(KSERVE / "runtime-beside"))
    (d,) = [r.deployment for r in result.deployments]
    assert "runtime" not in d.extra and {f.rule for f in result.findings} == {"KV004"}


def test_kserve_runtime_not_found_is_said_and_shm_left_unknown():
    result = run(KSERVE / "runtime-missing" / "isvc.yaml")
    (d,) = deps(result).values()
    assert d.has_shm is None  # not "no /dev/shm": the runtime usually mounts one
    (f,) = result.findings
    assert f.rule == "KV004" and f.where.line == 14
    assert (
        d.tensor_parallel.value == 2 and result.deployments[0].plan is not None
    )  # the predictor's part is checked


def test_kserve_real_nim_isvc_merges_its_runtime_from_the_corpus_folder():
    result = run(carried("NVIDIA__nim-deploy__kserve__nim-models__llama3-70b-instruct_4xa100_1.0.0.yaml"))
    (d,) = deps(result).values()
    assert d.shm_size.value == "16Gi" and d.gpus.value == 4  # the runtime's dshm, the predictor's GPUs
    assert "nvidia-nim-llama3-70b-instruct-1.0.0" in d.extra["runtime"].value
    assert [f.rule for f in result.findings] == ["KV004"]  # NIM is not modelled; no KV207


def test_kserve_runtime_placeholders_are_not_a_helm_template():
    result = run(carried("kserve__kserve__config__runtimes__kserve-huggingfaceserver-multinode.yaml"))
    (f,) = result.findings
    assert f.rule == "KV004" and "serving runtime template" in f.message


def test_a_helm_template_beside_is_not_read_as_a_runtime(tmp_path):
    (tmp_path / "runtime.yaml").write_text(
        (KSERVE / "runtime-beside" / "runtime.yaml")
        .read_text()
        .replace("name: vllm", "name: {{ .Values.name }}")
    )
    (tmp_path / "isvc.yaml").write_text((KSERVE / "runtime-beside" / "isvc.yaml").read_text())
    (d,) = deps(run(tmp_path / "isvc.yaml")).values()
    assert "runtime" not in d.extra


# --- KServe's Hugging Face server -------------------------------------------------------------

HF = STACKS / "kserve-hf"


def test_kserve_hf_server_flags_and_the_stock_runtime():
    result = run(HF / "good-vllm-backend.yaml")
    (d,) = deps(result).values()
    assert d.engine.value == "vllm" and "--backend vllm" in d.engine.note
    assert d.model.value == "meta-llama/Llama-3.1-8B-Instruct" and d.model.where.line == 18  # --model_id
    assert d.max_context.value == 8192 and d.max_sequences.value == 3
    assert d.shm_size.origin == "default" and "kserve-huggingfaceserver" in d.shm_size.note
    assert result.findings == [], [f.message for f in result.findings]  # --model_name is the server's


def test_kserve_hf_huggingface_backend_is_kv004_naming_why():
    result = run(HF / "bad-huggingface-backend.yaml")
    (f,) = result.findings
    assert f.rule == "KV004" and f.where.line == 17
    (d,) = deps(result).values()
    assert d.model.value == "meta-llama/Llama-2-7b-chat-hf"  # --model_dir /mnt/models holds the storageUri


def test_kserve_hf_auto_backend_is_vllm_only_for_a_model_vllm_serves():
    result = run(HF / "bad-misspelled-option.yaml")
    (d,) = deps(result).values()
    assert d.engine.value == "vllm" and d.engine.origin == "inferred" and "--backend auto" in d.engine.note
    (f,) = result.findings
    assert f.rule == "KV005" and "--max_model_length" in f.message and "ignores it" in f.message
    unknown = lint(
        (HF / "bad-misspelled-option.yaml")
        .read_text()
        .replace("meta-llama/Llama-2-7b-chat-hf", "acme/in-house-7b"),
        "isvc.yaml",
    )
    (f,) = unknown.findings
    assert f.rule == "KV004" and "--backend auto" in f.message and "acme/in-house-7b" in f.message


# --- SkyPilot's own variables -------------------------------------------------------------------


def test_skypilot_variables_take_accelerators_and_num_nodes():
    result = run(STACKS / "skypilot" / "good-multinode-pp.yaml")
    (d,) = deps(result).values()
    assert d.tensor_parallel.value == 8 and "SKYPILOT_NUM_GPUS_PER_NODE" in d.tensor_parallel.note
    assert d.tensor_parallel.where.line == 13  # resources.accelerators, where the value comes from
    assert d.pipeline_parallel.value == 2 and d.pipeline_parallel.where.line == 19  # num_nodes
    assert d.pods.value == 2 and d.gpus.value == 16
    assert result.findings == [], [f.message for f in result.findings]


def test_skypilot_pp_over_nodes_not_asked_for_is_kv201():
    result = run(STACKS / "skypilot" / "bad-pp-without-nodes.yaml")
    (f,) = result.findings
    assert f.rule == "KV201"


# SkyPilot tasks as its llm/ examples write them (llm/mixtral/serve.yaml, llm/qwen/qwen3-235b.yaml: the
# real files are pinned in tests/data/corpus_findings.yaml): a set of accelerator choices, the engine
# started in `run`, its TP from SkyPilot's GPU count or stated
SKYPILOT_MIXTRAL = """service:
  readiness_probe: /v1/models
  replica_policy: {min_replicas: 2}
resources:
  accelerators: {A100:4, A100:8, A100-80GB:2, A100-80GB:4, A100-80GB:8}
  ports: 8000
setup: |
  pip install vllm
run: |
  python -u -m vllm.entrypoints.openai.api_server \\
    --host 0.0.0.0 \\
    --model mistralai/Mixtral-8x7B-Instruct-v0.1 \\
    --tensor-parallel-size $SKYPILOT_NUM_GPUS_PER_NODE
"""
SKYPILOT_QWEN3 = """envs:
  MODEL_NAME: Qwen/Qwen3-235B-A22B-FP8
service:
  readiness_probe: /v1/models
  replicas: 2
resources:
  accelerators: {A100:8, A100-80GB:4, A100-80GB:8, H100:8, H200:8}
  ports: 8000
setup: |
  uv pip install "sglang>=0.4.6"
run: |
  python3 -m sglang.launch_server --model $MODEL_NAME \\
    --tp 4 --port 8000
"""


def test_skypilot_real_mixtral_tp_follows_the_accelerator_choice():
    result = lint(SKYPILOT_MIXTRAL, "serve.yaml")
    (d,) = deps(result).values()
    assert d.tensor_parallel.value == d.gpus.value == 2  # A100-80GB:2, the smallest allowed choice
    assert not {"KV005", "KV201"} & rules(result), [f.message for f in result.findings]


def test_idle_gpus_from_an_assumed_count_are_an_info_naming_it():
    """Noise policy: SkyPilot's Qwen3-235B example allows A100-80GB:4 or H100:8; that 4 of 8 sit idle
    rests on kvlint's pick among them, so it is an info that says so, not a warning."""
    result = lint(SKYPILOT_QWEN3, "qwen3-235b.yaml")
    (f,) = [f for f in result.findings if f.rule == "KV201"]
    assert f.severity.name == "INFO" and "kvlint's assumption" in f.message
    stated = run(FIXTURES / "KV201" / "bad-idle-gpus.yaml")
    assert [f.severity.name for f in stated.findings if f.rule == "KV201"] == ["WARNING"]


# --- KAITO --------------------------------------------------------------------------------------


def test_kaito_preset_image_serves_the_model_its_name_says():
    result = run(STACKS / "kaito" / "good-preset-image.yaml")
    (d,) = deps(result).values()
    assert d.model.value == "mistralai/Mistral-7B-Instruct-v0.3" and d.model.origin == "inferred"
    assert "/workspace/vllm/weights" in d.model.note and "supported_models.yaml" in d.model.note
    assert d.max_context.value == 8192 and result.deployments[0].plan is not None
    assert result.findings == [], [f.message for f in result.findings]  # --kaito-* are the wrapper's


def test_kaito_workspace_preset_names_its_hugging_face_model_and_the_operators_parallelism():
    result = run(STACKS / "kaito" / "workspace-preset.yaml")
    (d,) = deps(result).values()
    assert d.model.value == "microsoft/Phi-3-medium-128k-instruct" and d.model.where.line == 15
    # no ConfigMap: KAITO's operator picks TP = the node's GPUs (1) on the one node its estimator gives
    assert d.engine.value == "vllm" and d.tensor_parallel.value == 1 and d.pods.value == 1
    assert "KAITO's operator" in d.tensor_parallel.note


def test_kaito_inference_configmap_fixes_tp_and_vllm_runs_it_on_the_vm_gpus():
    """KAITO's own custom-config example: its ConfigMap's vllm: keys are appended after the operator's
    flags, so TP 2 on a one-GPU VM is what vLLM gets (error, at the ConfigMap's line)."""
    result = run(STACKS / "kaito" / "bad-custom-config.yaml")
    (d,) = deps(result).values()
    assert d.engine.value == "vllm" and d.model.value == "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B"
    assert d.tensor_parallel.value == 2 and d.tensor_parallel.where.line == 19
    assert d.max_context.value == 131072 and d.max_context.where.line == 18
    assert d.gpu_memory_utilization.value == 0.95 and d.gpu_memory_utilization.where.line == 16
    assert d.gpus_per_pod.value == 1 and "Standard_NC24ads_A100_v4" in d.gpus_per_pod.note
    assert d.pods.value == 1 and "estimator" in d.pods.note
    by_rule = {f.rule: f for f in result.findings}
    assert set(by_rule) == {"KV201", "KV103"}
    assert by_rule["KV201"].where.line == 19 and by_rule["KV201"].severity.name.lower() == "error"


def test_kaito_configmap_beside_the_workspace_is_read_and_located_in_its_file():
    result = run(STACKS / "kaito" / "config-beside" / "workspace.yaml")
    (d,) = deps(result).values()
    assert d.engine.value == "vllm" and d.tensor_parallel.value == 1
    assert d.max_sequences.value == 6 and d.max_sequences.where.file.endswith("inference-params.yaml")
    assert d.max_sequences.where.line == 15
    assert result.deployments[0].plan is not None
    assert result.findings == [], [f.message for f in result.findings]


def test_kaito_defaults_are_named_when_the_configmap_leaves_them_out(tmp_path):
    text = (STACKS / "kaito" / "config-beside" / "inference-params.yaml").read_text()
    (tmp_path / "cm.yaml").write_text(text.replace("      gpu-memory-utilization: 0.95\n", ""))
    ws = tmp_path / "ws.yaml"
    ws.write_text((STACKS / "kaito" / "config-beside" / "workspace.yaml").read_text())
    (d,) = deps(run(ws)).values()
    assert d.gpu_memory_utilization.value == 0.95 and d.gpu_memory_utilization.origin == "inferred"
    assert "KAITO default" in d.gpu_memory_utilization.note


def test_kaito_without_the_preset_in_kaitos_catalog_leaves_the_parallelism_to_the_operator():
    """falcon-40b-instruct is not in KAITO's model catalog (no modelFileSize): the operator's choice is not
    computed, and KV004 names the ConfigMap that fixes no tensor-parallel-size."""
    path = carried("Azure__kaito__examples__inference__kaito_workspace_falcon_40b-instruct.yaml")
    (f,) = run(path).findings
    assert f.rule == "KV004" and "default inference ConfigMap inference-params-template" in f.message


def test_kaito_workspace_whose_configmap_is_elsewhere_says_what_was_not_checked():
    result = run(STACKS / "kaito" / "config-missing.yaml")
    (f,) = result.findings
    assert f.rule == "KV004"


@pytest.mark.parametrize(
    ("edit", "pods", "dp"),
    [
        ("resource:\n  count: 2\n  instanceType", 1, None),  # count is only the estimator's starting point
        ('instanceType: "Standard_NC48ads_A100_v4"', 1, 2),  # 27.51Gi < half of one 80Gi A100: DP 2
    ],
)
def test_kaito_operator_choices_are_computed_as_kaito_computes_them(tmp_path, edit, pods, dp):
    """KAITO's node estimator and configureParallelism (kaito-project/kaito@056b828) on the config-beside
    example: the ConfigMap's tensor-parallel-size 1 wins over the operator's TP; its data parallelism stays."""
    src = STACKS / "kaito" / "config-beside"
    (tmp_path / "cm.yaml").write_text((src / "inference-params.yaml").read_text())
    text = (src / "workspace.yaml").read_text()
    if "count" in edit:
        text = text.replace("resource:\n  instanceType", edit)
    else:
        text = text.replace('instanceType: "Standard_NC24ads_A100_v4"', edit)
    assert text != (src / "workspace.yaml").read_text()
    (tmp_path / "ws.yaml").write_text(text)
    (r,) = run(tmp_path / "ws.yaml").deployments
    d = r.deployment
    assert d.pods.value == pods and d.tensor_parallel.value == 1
    assert (d.data_parallel.value if d.data_parallel else None) == dp
    assert r.plan is not None


def test_fix_rounds_read_the_runtime_beside_the_file(tmp_path):
    """--fix lints the file again between rounds: with the runtime beside it, as the check does."""
    from kvlint.fix.files import fix_files
    from kvlint.run.lint import file_linter

    for name in ("isvc.yaml", "runtime.yaml"):
        (tmp_path / name).write_text((KSERVE / "runtime-beside" / name).read_text())
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(
        isvc.read_text().replace(
            "--tensor-parallel-size=2", "--tensor-parallel-size=2\n        - --gpu-memory-utilization=1.5"
        )
    )
    checked = run(isvc)
    assert {f.rule for f in checked.findings} == {"KV208"}  # the runtime's /dev/shm: no KV207
    settings = Settings()
    fixed = fix_files(
        [(str(isvc), "isvc.yaml")],
        lambda path, shown: file_linter(settings, shown, path),
        settings.max_file_size,
        unsafe=False,
        write=False,
    )
    assert fixed.changed_files == 1 and "gpu-memory-utilization" in fixed.diff


# --- other vLLM Helm chart layouts (recognised by their keys) ----------------------------------

CHARTS = STACKS / "helm-charts"


def test_opea_vllm_chart_renders_model_args_shm_and_gpu():
    result = run(CHARTS / "good-opea-vllm-gpu.yaml")
    (r,) = result.deployments
    d = r.deployment
    assert d.engine.value == "vllm" and d.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert d.model.origin == "stated" and d.model.where.line == 18  # LLM_MODEL_ID
    assert d.max_context.value == 8192 and d.max_context.where.line == 15  # extraCmdArgs
    assert d.gpus.value == 1 and d.gpu.value == "l4" and d.extra["replicas"].value == 1
    assert d.has_shm and d.shm_size.value == "4Gi" and d.shm_size.where.line == 8  # shmSize
    assert r.plan is not None and result.findings == [], [f.message for f in result.findings]


def test_opea_vllm_chart_tp_above_its_gpus_is_kv201():
    result = run(CHARTS / "bad-opea-vllm-tp-above-gpus.yaml")
    assert rules(result) == {"KV201"}
    assert result.findings[0].where.line == 12


def test_opea_vllm_override_file_takes_the_charts_default_model_and_shm():
    result = run(CHARTS / "opea-vllm-overlay-default-model.yaml")
    (r,) = result.deployments
    d = r.deployment
    assert d.model.value == "meta-llama/Meta-Llama-3-8B-Instruct" and d.model.origin == "default"
    assert "chart's default LLM_MODEL_ID" in d.model.note
    assert d.shm_size.value == "1Gi" and d.shm_size.origin == "default"
    assert r.plan is not None and result.findings == [], [f.message for f in result.findings]


def test_real_opea_vllm_values_are_a_cpu_vllm_of_the_stated_model():
    result = run(corpus2("opea-project__GenAIInfra__helm-charts__common__vllm__values.yaml"))
    (r,) = result.deployments
    d = r.deployment
    assert d.model.value == "meta-llama/Meta-Llama-3-8B-Instruct" and d.model.where.line == 103
    assert d.accelerator == "cpu"
    assert [(f.rule, f.severity.name) for f in result.findings] == [("KV004", "INFO")]
    assert "CPU vLLM" in result.findings[0].message


def test_vllm_chart_gpu_models_become_the_node_affinity():
    good = run(CHARTS / "good-vllm-chart-gpu-product.yaml")
    (r,) = good.deployments
    assert r.deployment.gpu.value == "l4" and r.plan is not None and good.findings == []
    bad = run(CHARTS / "bad-vllm-chart-gpu-placeholder.yaml")
    (f,) = bad.findings
    assert (
        f.rule == "KV002" and f.where.line == 21 and "TYPE_GPU_USED" in f.message and "Pending" in f.message
    )


def test_silogen_vllm_chart_engine_args_model_and_gpus():
    result = run(CHARTS / "good-silogen-vllm.yaml")
    (r,) = result.deployments
    d = r.deployment
    assert (
        d.engine.value == "vllm" and d.model.value == "Qwen/Qwen2.5-7B-Instruct" and d.model.where.line == 7
    )
    assert d.gpus.value == 1 and d.gpus_per_pod.note == "amd.com/gpu" and d.tensor_parallel.value == 1
    assert d.max_context.value == 8192 and d.max_context.where.line == 10
    assert d.max_sequences.value == 8 and d.enforce_eager.value is True
    assert d.shm_size.value == "32Gi" and d.extra["replicas"].value == 1
    assert [(f.rule, f.severity.name) for f in result.findings] == [("KV002", "INFO")]
    assert "AMD" in result.findings[0].message  # amd.com/gpu: the AMD cards are the candidates


def test_silogen_vllm_chart_gpus_is_the_tp_and_the_gpu_count():
    result = run(CHARTS / "bad-silogen-vllm-too-few-gpus.yaml")
    (f,) = result.findings
    assert f.rule == "KV002" and f.severity.name == "ERROR"


def test_real_silogen_override_without_gpus_takes_the_charts_default():
    name = "silogen__ai-workloads__workloads__llm-inference-vllm__helm__overrides__models__cohereforai_aya-expanse-32b-fp8.yaml"
    result = run(carried(name))
    (r,) = result.deployments
    d = r.deployment
    assert d.model.value == "CohereForAI/aya-expanse-32b" and d.quantization.value == "fp8"
    assert (
        d.gpus.value == 1
        and d.tensor_parallel.origin == "default"
        and "default `gpus`" in d.tensor_parallel.note
    )
    assert {f.rule for f in result.findings} == {"KV002"} and all(
        f.severity.name == "INFO" for f in result.findings
    )


def test_vllm_chart_keys_it_does_not_read_are_kv005_naming_the_place():
    result = run(CHARTS / "bad-vllm-chart-misplaced-keys.yaml")
    kv005 = sorted((f.where.line, f.message) for f in result.findings if f.rule == "KV005")
    assert [line for line, _ in kv005] == [9, 12]
    # the GPU affinity is rendered only when requests and limits both ask for GPUs: no GPU type here
    assert result.deployments[0].deployment.gpu is None


def test_opea_chart_keys_it_does_not_read_are_kv005_naming_the_place():
    result = run(CHARTS / "bad-opea-vllm-misplaced-args.yaml")
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.where.line == 8
    assert result.deployments[0].deployment.max_context is None or (
        result.deployments[0].deployment.max_context.origin != "stated"
    )  # the misplaced --max-model-len is not applied


def test_opea_umbrella_reads_the_vllm_subchart_section():
    result = run(CHARTS / "good-opea-umbrella-vllm-subchart.yaml")
    (r,) = result.deployments
    d = r.deployment
    assert d.name == "vllm" and d.model.value == "Qwen/Qwen2.5-7B-Instruct" and d.model.where.line == 10
    assert d.image.origin == "default" and d.gpu.value == "l4" and d.gpus.value == 1
    assert d.max_context.value == 8192 and d.shm_size.value == "8Gi"
    assert r.plan is not None and result.findings == [], [f.message for f in result.findings]
    real = run(corpus2("opea-project__GenAIInfra__helm-charts__chatqna__values.yaml"))
    (r,) = real.deployments
    assert r.deployment.model.where.line == 74 and r.deployment.shm_size.value == "128Gi"
    assert [(f.rule, f.severity.name) for f in real.findings] == [("KV004", "INFO")]


def test_production_stack_modelspec_keys_it_does_not_read_are_kv005_naming_the_place():
    result = run(CHARTS / "bad-production-stack-misplaced-keys.yaml")
    kv005 = sorted((f.where.line, f.message) for f in result.findings if f.rule == "KV005")
    assert [line for line, _ in kv005] == [14, 21]
    assert all("production-stack@" in m and "values.schema.json" in m for _, m in kv005)
    # the misplaced maxNumSeqs is not applied as --max-num-seqs
    d = result.deployments[0].deployment
    assert d.max_sequences is None or d.max_sequences.origin != "stated"


def test_production_stack_missing_request_gpu_takes_the_charts_zero():
    result = run(CHARTS / "bad-production-stack-no-gpu-request.yaml")
    d = result.deployments[0].deployment
    assert d.gpus_per_pod.value == 0 and d.gpus_per_pod.origin == "default"
    (f,) = [f for f in result.findings if f.rule == "KV005"]
    assert f.where.line == 9


def test_production_stack_keys_the_chart_reads_give_no_kv005():
    result = run(CHARTS / "good-production-stack-keys.yaml")
    assert not [f for f in result.findings if f.rule == "KV005"]
    assert result.deployments[0].deployment.gpus_per_pod.value == 1
    assert not [f for f in result.findings if f.severity.name in ("WARNING", "ERROR")]
