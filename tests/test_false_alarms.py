"""Classes of false alarm found by hand-checking both corpus folders (tests/data/corpus_findings.yaml),
each fixed at its class and held here on small inputs in the real files' layouts."""

from __future__ import annotations

from conftest import lint


def rules(result) -> list[str]:
    return sorted(f.rule for f in result.findings)


def pod(container: str, volumes: str = "", replicas: str = "") -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\nspec:\n"
        + replicas
        + "  template:\n    spec:\n"
        + "      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n"
        + volumes
        + "      containers:\n"
        + container
    )


def test_serve_args_on_the_vllm_image_are_read_as_vllm_serve():
    """vllm-project/vllm's k8s-monitoring example: `args: [serve, MODEL, --tensor-parallel-size=4]` on
    vllm/vllm-openai. Read as `vllm serve`: the model and TP 4 count (it was 'model is not stated'
    and '3 GPUs sit idle'); Qwen3-235B in bf16 then really does not fit 4 x H100 (KV101)."""
    text = pod(
        "        - name: vllm\n          image: vllm/vllm-openai:latest\n"
        '          args: ["serve", "Qwen/Qwen3-235B-A22B", "--tensor-parallel-size=4"]\n'
        '          resources:\n            limits:\n              nvidia.com/gpu: "4"\n',
        "      volumes:\n        - name: shm\n          emptyDir: {medium: Memory}\n",
    )
    result = lint(text)
    d = result.deployments[0].deployment
    assert d.model is not None and d.model.value == "Qwen/Qwen3-235B-A22B"
    assert d.tensor_parallel is not None and d.tensor_parallel.value == 4
    assert "KV201" not in rules(result) and "KV003" not in rules(result)
    assert "KV101" in rules(result)


def test_an_engine_named_in_an_image_tag_is_not_an_engine_image():
    """KubeRay's verl sample runs `hiyouga/verl:ngc-…-vllm0.8.4-…`: an RL training image that bundles
    vLLM, with no engine command. It was read as a vLLM server ('model is not stated', '3 GPUs idle')."""
    text = pod(
        "        - name: ray-head\n          image: hiyouga/verl:ngc-th2.6.0-cu126-vllm0.8.4-flashinfer0.2.2\n"
        '          resources:\n            limits:\n              nvidia.com/gpu: "4"\n'
    )
    assert lint(text).deployments == []
    served = text.replace(
        "hiyouga/verl:ngc-th2.6.0-cu126-vllm0.8.4-flashinfer0.2.2", "vllm/vllm-openai:v0.8.4"
    )
    assert len(lint(served).deployments) == 1  # the vLLM image itself still is one


def test_vllm_omni_is_reported_as_not_modelled_not_as_a_bad_vllm_flag():
    """AIBrix's vLLM-Omni sample: `vllm serve Qwen/Qwen2.5-Omni-7B --omni` on vllm/vllm-omni with 2 GPUs.
    vLLM-Omni places its stages by its own config: KV004, not 'vLLM has no option --omni' + idle GPUs."""
    text = pod(
        "        - name: vllm-omni\n          image: vllm/vllm-omni:v0.20.0\n"
        "          command: [vllm, serve, Qwen/Qwen2.5-Omni-7B, --port, '8000', --omni]\n"
        '          resources:\n            limits:\n              nvidia.com/gpu: "2"\n',
    )
    result = lint(text)
    assert "KV005" not in rules(result) and "KV201" not in rules(result)
    (kv004,) = [f for f in result.findings if f.rule == "KV004"]
    assert "vLLM-Omni" in kv004.message
    assert result.deployments[0].deployment.model.value == "Qwen/Qwen2.5-Omni-7B"


def test_ascend_gaudi_and_neuron_builds_are_not_gpus_of_unknown_type():
    """vllm-ascend on huawei.com/Ascend910, and engine images built for Gaudi or Neuron on pods that
    request no GPU: KV004 naming the accelerator, not 'GPU type is not stated'."""
    ascend = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: quay.io/ascend/vllm-ascend:v0.11.0rc1-a3\n"
        "          command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct]\n"
        '          resources:\n            limits:\n              huawei.com/Ascend910: "1"\n'
    )
    result = lint(ascend)
    assert rules(result) == ["KV004"] and "Ascend" in result.findings[0].message
    gaudi = ascend.replace("quay.io/ascend/vllm-ascend:v0.11.0rc1-a3", "opea/vllm-gaudi:1.22.0").replace(
        '              huawei.com/Ascend910: "1"\n', "              cpu: '8'\n"
    )
    result = lint(gaudi)
    assert rules(result) == ["KV004"] and "Gaudi" in result.findings[0].message
    neuron = gaudi.replace(
        "opea/vllm-gaudi:1.22.0", "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9"
    )
    assert "Neuron" in lint(neuron).findings[0].message
    cuda = gaudi.replace("opea/vllm-gaudi:1.22.0", "vllm/vllm-openai:v0.11.0")
    assert "KV002" in rules(lint(cuda))  # a CUDA image without a GPU request is still a GPU workload


def test_shm_is_asked_of_pods_that_hold_several_gpus_not_of_one_gpu_per_pod():
    """AIBrix's two-node fleet: TP 2 over two pods of one GPU each (Ray). The ranks talk over the
    network; a pod with one GPU needs no memory-backed /dev/shm for NCCL."""
    text = (
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: two\nspec:\n"
        "  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      spec:\n"
        "        nodeSelector:\n          nvidia.com/gpu.product: NVIDIA-L4\n"
        "        containers:\n          - name: vllm\n            image: vllm/vllm-openai:v0.11.0\n"
        "            command: [vllm, serve, Qwen/Qwen2.5-1.5B-Instruct, --tensor-parallel-size, '2',"
        " --distributed-executor-backend, ray]\n"
        "            resources:\n              limits:\n                nvidia.com/gpu: 1\n"
    )
    assert "KV207" not in rules(lint(text))
    two = text.replace("size: 2", "size: 1").replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2")
    assert "KV207" in rules(lint(two))


def test_a_model_named_by_an_unset_variable_is_said_once():
    """OPEA's compose files: `--model ${LLM_MODEL_ID}` with the variable from the host's environment.
    One KV004 info says the model is compose's placeholder and why (no .env sets it); a second warning
    'model is not stated' was wrong, and so was a KV005 blaming the container for compose's variable."""
    text = (
        "services:\n  vllm-service:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    command: --model ${LLM_MODEL_ID} --tensor-parallel-size 1\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: 1\n              capabilities: [gpu]\n"
    )
    result = lint(text, path="compose.yaml")
    (said,) = [f.message for f in result.findings if f.rule == "KV004"]
    assert "${LLM_MODEL_ID} has no value kvlint can read" in said
    assert not {"KV003", "KV005"} & set(rules(result))


def test_a_gpu_request_or_engine_command_kvlint_cannot_read_is_said_not_passed():
    """Issue 12: a file holding a GPU container or an engine command kvlint cannot read gets a KV004,
    never 'no problems found' (GKE's offline-batch JobSet runs `python -m vllm.entrypoints…` inside a
    JobSet's nested template; llmaz's OpenModel asks for GPUs in its own layout)."""
    jobset = (
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: obi\nspec:\n  replicatedJobs:\n"
        "    - name: w\n      template:\n        spec:\n          template:\n            spec:\n"
        "              containers:\n                - name: w\n                  image: python:3.12\n"
        "                  command: [sh, -c, 'python3 -m vllm.entrypoints.openai.run_batch -i in.jsonl']\n"
    )
    result = lint(jobset)
    if result.deployments:  # read as a workload: then it is checked, which is what the rule asks
        return
    (f,) = result.findings
    assert f.rule == "KV004" and "vllm.entrypoints" in f.message and f.where.line == 14
    crd = (
        "apiVersion: llmaz.io/v1alpha1\nkind: OpenModel\nmetadata:\n  name: opt\nspec:\n  inferenceConfig:\n"
        "    flavors:\n      - name: a10\n        limits:\n          nvidia.com/gpu: 1\n"
        "  resources:\n    limits:\n      nvidia.com/gpu: 1\n"
    )
    (f,) = lint(crd).findings
    assert f.rule == "KV004" and "nvidia.com/gpu: 1" in f.message and f.where.line == 10  # the flavor's
    pool = (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  limits:\n"
        "    nvidia.com/gpu: 8\n"
    )
    assert lint(pool).findings == []  # a node pool's limit is no container asking for a GPU
    cpu = pod("        - name: web\n          image: nginx:1.27\n")
    assert (
        lint(
            cpu.replace("      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n", "")
        ).findings
        == []
    )


def test_an_engine_mock_is_not_an_engine():
    """AIBrix's gateway sample runs `python3 app.py` in aibrix/vllm-mock: a stand-in for vLLM's API
    with no model and no GPU. It was read as a vLLM server ('model is not stated', 'GPU not stated')."""
    text = pod(
        "        - name: llm-engine\n          image: aibrix/vllm-mock:nightly\n          command: [python3, app.py]\n"
    )
    assert lint(text).deployments == []


def test_a_gpu_vm_type_in_a_layout_kvlint_does_not_read_is_said():
    """A KAITO RAGEngine (kaito-project/kaito@056b828 examples/RAG/kaito_ragengine_phi_3.yaml) names its GPU
    nodes only by the Azure VM type; kvlint reads no workload from it, so it says so (KV004), naming the VM's
    GPUs. (KAITO's InferenceSet, which once served here, is now read as the Workspaces it makes.) A chart's
    resource profiles (KubeAI) ask for GPUs for others to use: no container of their own, nothing said."""
    rag = (
        "apiVersion: kaito.sh/v1alpha1\nkind: RAGEngine\nmetadata:\n  name: ragengine-start\nspec:\n"
        "  compute:\n    instanceType: Standard_NC24ads_A100_v4\n"
        "  embedding:\n    local:\n      modelID: BAAI/bge-small-en-v1.5\n"
    )
    (f,) = lint(rag).findings
    assert f.rule == "KV004" and "A100" in f.message and f.where.line == 7
    profiles = "resourceProfiles:\n  nvidia-gpu-l4:\n    limits:\n      nvidia.com/gpu: 1\n"
    assert lint(profiles, path="values.yaml").findings == []


def test_ray_pods_have_the_shm_kuberay_mounts():
    """KubeRay mounts an emptyDir medium Memory at /dev/shm in every Ray container it builds
    (ray-operator/controllers/ray/common/pod.go BuildPod -> addEmptyDir), so a 2-GPU RayService
    worker without a /dev/shm volume of its own is not short of shared memory (GKE's Ray Serve
    samples, KubeRay's own LLM samples were warned)."""
    text = (
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: llm\nspec:\n  serveConfigV2: |\n"
        "    applications:\n    - name: llm\n      import_path: ray.serve.llm:build_openai_app\n"
        "      args:\n        llm_configs:\n        - model_loading_config:\n            model_id: m\n"
        "            model_source: Qwen/Qwen2.5-7B-Instruct\n          engine_kwargs:\n"
        "            tensor_parallel_size: 2\n"
        "  rayClusterConfig:\n    headGroupSpec:\n      template:\n        spec:\n          containers:\n"
        "          - name: ray-head\n            image: rayproject/ray-llm:2.46.0-py311-cu124\n"
        "    workerGroupSpecs:\n    - groupName: gpu\n      template:\n        spec:\n"
        "          nodeSelector:\n            cloud.google.com/gke-accelerator: nvidia-l4\n"
        "          containers:\n          - name: llm\n            image: rayproject/ray-llm:2.46.0-py311-cu124\n"
        '            resources:\n              limits:\n                nvidia.com/gpu: "2"\n'
    )
    result = lint(text)
    assert result.deployments, "the Ray Serve LLM config is a workload"
    assert "KV207" not in rules(result)
    plain = pod(
        "        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
        "          command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, '2']\n"
        '          resources:\n            limits:\n              nvidia.com/gpu: "2"\n'
    )
    assert "KV207" in rules(lint(plain))  # a plain Deployment gets no such volume


def test_an_llm_inference_service_running_a_simulator_is_not_read_as_vllm():
    """KServe's prefix-cache routing sample replaces vLLM with ghcr.io/llm-d/llm-d-inference-sim: its
    flags (--mode, --zmq-endpoint, …) are the simulator's, not vLLM's unknown options (5 KV005s)."""
    text = (
        "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata:\n  name: sim\nspec:\n"
        "  model:\n    uri: hf://facebook/opt-125m\n    name: facebook/opt-125m\n  template:\n    containers:\n"
        "      - name: main\n        image: ghcr.io/llm-d/llm-d-inference-sim:v0.10.0\n"
        '        command: ["/app/llm-d-inference-sim"]\n'
        "        args: [--port, '8000', --mode, random, --zmq-endpoint, 'tcp://epp:5557']\n"
    )
    result = lint(text)
    assert "KV005" not in rules(result)
    assert any(f.rule == "KV004" and "simulator" in f.message for f in result.findings)


def test_chart_values_naming_an_engine_image_and_gpus_are_said_when_unread():
    """silogen's llm-inference-* charts: top-level `image: rocm/vllm…`, `model:` and `gpus: 1`; no
    reader takes that layout, so it is a KV004 at the GPU count rather than 'no problems found'."""
    text = 'image: "rocm/vllm:rocm6.4.1_vllm_0.9.0.1_20250605"\nmodel: "TinyLlama/TinyLlama-1.1B-Chat-v1.0"\ngpus: 1\n'
    result = lint(text, path="values.yaml")
    if result.deployments:  # read by a values reader: then it is checked, which is the point
        return
    (f,) = result.findings
    assert f.rule == "KV004" and "gpus" in f.message and f.where.line == 3
    assert lint("image: nginx:1.27\ngpus: 1\n", path="values.yaml").findings == []
