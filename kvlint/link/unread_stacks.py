"""Serving configuration of stacks kvlint has no reader for, recognised by class (issue 12): a serving
custom resource by API group and kind, or chart values by a key signature. Each entry says what kvlint
cannot check in such a file and why, with the stack's documentation or source that says so. Used by
link/unread for a document that gave no workload and no other finding."""

from __future__ import annotations

from kvlint.codes import NOT_CHECKABLE
from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Node, Scalar, Sequence

# (API group, kind) -> what kvlint cannot check and why (source). OME InferenceService / ServingRuntime, KAITO
# InferenceSet and llmaz Playground / Service have readers now (extract/kinds/ome.py, kaito.py, llmaz.py).
SERVING_KINDS: dict[tuple[str, str], str] = {
    ("gmc.opea.io", "GMConnector"): (
        "OPEA GMConnector: a pipeline of OPEA microservices; the LLM server (TGI/vLLM) pods, model and "
        "accelerators are rendered by the GMC controller from its own service manifests, not in this file "
        "(opea-project/GenAIInfra microservices-connector)"
    ),
    ("networking.serving.volcano.sh", "ModelServer"): (
        "kthena ModelServer: a routing object that selects serving pods by label (workloadSelector); the "
        "engine arguments and GPUs are in the ModelServing workloads it selects, not in this file "
        "(volcano-sh/kthena docs 'kthena-router' examples)"
    ),
}

# Chart values by key signature: (keys from the root that must all be present, what and why).
# The first key path is where the finding is placed. Not here: production-stack and llm-d-modelservice
# values, which have readers (extract/production_stack, extract/llmd_values); their chart defaults are read and hold no enabled model.
VALUE_SIGNATURES: tuple[tuple[tuple[tuple[str, ...], ...], str], ...] = (
    (
        (("models",), ("gpuPresets",)),
        "OME ome-serving chart values: models with GPU counts rendered by the chart into ClusterBaseModels and "
        "ClusterServingRuntimes at install time; kvlint does not render Helm templates (sgl-project/ome "
        "charts/ome-serving)",
    ),
    (
        (("backendRuntime",),),
        "llmaz chart values: engine images of the BackendRuntimes only; the models, GPUs and engine "
        "arguments are set per Playground, not in this file (InftyAI/llmaz chart/values.global.yaml)",
    ),
    (
        (("sglang",), ("model", "id"), ("instances",)),
        "awsome-inference SGLang config: its deploy scripts turn model.id, the sglang flags and the instance "
        "type into an SGLang launch on EC2; kvlint does not read this layout (aws-samples/awsome-inference "
        "2.projects/sglang-inference)",
    ),
    (
        (("tensor_parallel_size",), ("kv_cache_config",)),
        "TensorRT-LLM LLM-API options file (trtllm-serve --config / --extra_llm_api_options): the model and "
        "GPUs are on the launch command that loads it, not in this file (NVIDIA TensorRT-LLM docs "
        "'trtllm-serve', tensorrt_llm/llmapi/llm_args.py)",
    ),
    (
        (("ollama", "models"), ("ollama", "gpu")),
        "Ollama chart values (otwld/ollama-helm) that pull no model at start (ollama.models lists none): "
        "Ollama pulls the model it serves at run time (`ollama pull`, a request's `model`), so the file "
        "names none (the models it lists are read by extract/charts/ollama_chart.py)",
    ),
    (
        (("nim-llm", "model", "name"),),
        "NVIDIA nim-llm subchart values: a NIM picks its engine, parallelism and memory settings inside the "
        "container from the model profile matching the GPUs it finds (NVIDIA NIM for LLMs docs 'Model "
        "Profiles'); kvlint does not render the chart",
    ),
)


def issue(root: Mapping, path: str, label: str) -> Issue | None:
    api, kind = root.value("apiVersion"), root.value("kind")
    if isinstance(api, str) and isinstance(kind, str):
        why = SERVING_KINDS.get((api.split("/")[0], kind))
        if why is not None:
            at = root.get("spec") or root.get("kind") or root
            return Issue(NOT_CHECKABLE, f"{label}{why}: not checked", at.where(path))
        return None
    for keys, why in VALUE_SIGNATURES:
        nodes = [root.at(*k) for k in keys]
        if all(_present(n) for n in nodes):
            first = nodes[0]
            assert first is not None
            return Issue(NOT_CHECKABLE, f"{why}: not checked", first.where(path))
    return None


def _present(node: Node | None) -> bool:
    if isinstance(node, Mapping | Sequence):
        return len(node) > 0
    return isinstance(node, Scalar) and node.value not in (None, "")
