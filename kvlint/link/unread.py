"""What a file holds that no reader took for a serving workload, said instead of passed over (issue 12):
a container that requests GPUs (or another accelerator), a `resources` request for them in a layout
kvlint does not know, or an engine command line. Used only for a file that gave no workload and no
other KV001/KV004/KV005, so a file kvlint reads is never reported twice; one KV004 per document."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kvlint.bounds import show
from kvlint.catalog import gpus
from kvlint.codes import NOT_CHECKABLE
from kvlint.extract.pod import pods
from kvlint.extract.pod.argv import scalar_where
from kvlint.extract.registry import NODE_POOL_TEMPLATES, node_pool_reader
from kvlint.findings import Issue, IssueKind
from kvlint.link import unread_stacks
from kvlint.load.compose import Document
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import replace

MAX_NODES = 50_000
ACCELERATORS = (*pods.GPU_RESOURCES, *pods.TPU_RESOURCES, *pods.NEURON_RESOURCES, *pods.GAUDI_RESOURCES)
# engine entry points as they are written on a command line (vLLM, SGLang, TGI, TensorRT-LLM,
# llama.cpp, Ollama, NVIDIA Dynamo workers, KServe's Hugging Face server)
ENGINE = re.compile(
    r"(?<![\w/.-])(vllm\s+serve|vllm\.entrypoints\.[\w.]+|sglang\.launch_server|sglang\s+serve|"
    r"text-generation-launcher|trtllm-serve|llama-server|ollama\s+serve|dynamo\.(?:vllm|sglang|trtllm)|"
    r"-m\s+huggingfaceserver)\b"
)
# objects whose limits are a cluster's capacity, not a workload's request (Karpenter, quotas), and
# KubeAI's resourceProfiles, which define what a Model's resourceProfile means (read with the Model)
CAPACITY_KINDS = ("NodePool", "NodeClaim", "ResourceQuota", "LimitRange", "ClusterQueue", "ResourceFlavor")
CAPACITY_KEYS = {"resourceProfiles"}
WHY = "in a layout kvlint does not read as a serving workload: not checked"


def issues(documents: list[Document], path: str) -> list[Issue]:
    out: list[Issue] = []
    for doc in documents:
        root = doc.root
        if not isinstance(root, Mapping) or _node_pool(root):
            continue  # a cluster's node-pool definition: read as such (kvlint/link/pools.py), not a workload
        found = (
            _container(root, path)
            or _request(root, path)
            or _command(root, path)
            or _instance(root, path)
            or _engine_values(root, path)
            or _patch(root, path)
            or _accelerator_named(root, path)
            or unread_stacks.issue(root, path, _label(root))
        )
        if found is not None:
            out.append(replace(found, kind=IssueKind.NOT_READ_AS_WORKLOAD))
    return out


def _node_pool(root: Mapping) -> bool:
    return node_pool_reader(root) is not None or root.value("kind") in NODE_POOL_TEMPLATES


def _label(root: Mapping) -> str:
    kind, name = root.value("kind"), root.at("metadata", "name")
    if isinstance(kind, str) and isinstance(name, Scalar) and name.value is not None:
        return f"{kind}/{show(str(name.value), 60)}: "
    return f"{kind}: " if isinstance(kind, str) else ""


def _walk(root: Node) -> Iterator[tuple[tuple[str, ...], Node]]:
    """(keys from the root, node) for every node under `root`, each shared node once, at most MAX_NODES."""
    seen: set[int] = set()
    stack: list[tuple[tuple[str, ...], Node]] = [((), root)]
    while stack and len(seen) < MAX_NODES:
        keys, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield keys, node
        if isinstance(node, Mapping):
            stack.extend(((*keys, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, Sequence):
            stack.extend((keys, item) for item in reversed(node.items))


def _container(root: Mapping, path: str) -> Issue | None:
    for spec in pods.find_pod_specs(root):
        for c in pods.containers(spec.node):
            for res in pods.device_resources(c, path):
                if res.count is not None and res.count <= 0:
                    continue
                image = c.scalar("image")
                shown = f" ({show(str(image.value), 80)})" if image is not None and image.value else ""
                name = show(str(c.value("name") or "?"), 60)
                return Issue(
                    NOT_CHECKABLE,
                    f"{_label(root)}container {name}{shown} requests {res.text} {res.name} but runs nothing kvlint "
                    "reads as an LLM engine (vLLM, SGLang, TGI or one it names): not checked",
                    res.where,
                )
    return None


def _request(root: Mapping, path: str) -> Issue | None:
    """An accelerator count under `limits` / `requests` anywhere (a CRD's own flavour list, a
    values file's resources), except where it is a capacity rather than a request."""
    if root.value("kind") in CAPACITY_KINDS:
        return None
    for keys, node in _walk(root):
        if not keys or keys[-1] not in ("limits", "requests") or not isinstance(node, Mapping):
            continue
        if CAPACITY_KEYS & set(keys):
            continue
        for name, value in node.items():
            if (
                (name in ACCELERATORS or pods.is_ascend(name))
                and isinstance(value, Scalar)
                and _positive(value)
            ):
                return Issue(NOT_CHECKABLE, f"{_label(root)}{value.value} {name} {WHY}", value.where(path))
    return None


def _positive(node: Scalar) -> bool:
    text = str(node.value).strip()
    return not text.isdigit() or int(text) > 0  # a count that is not a number is not known to be zero


def _command(root: Mapping, path: str) -> Issue | None:
    for _keys, node in _walk(root):
        if isinstance(node, Scalar) and isinstance(node.value, str):
            m = ENGINE.search(node.value)
            if m:
                return Issue(
                    NOT_CHECKABLE,
                    f"{_label(root)}an engine command ({show(m.group(1), 60)}) {WHY}",
                    scalar_where(node, path) if node.line == node.end_line else node.where(path),
                )
    return None


# Keys that pick a VM type: KAITO's resource.instanceType (Workspace, InferenceSet template) and the
# Kubernetes instance-type labels.
INSTANCE_KEYS = ("instanceType", "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _instance(root: Mapping, path: str) -> Issue | None:
    """A GPU VM type the catalog knows (KAITO InferenceSet: the GPU is named only by the Azure VM)."""
    for keys, node in _walk(root):
        if keys and keys[-1] in INSTANCE_KEYS and isinstance(node, Scalar) and isinstance(node.value, str):
            hit = gpus.instance(node.value)
            if hit is not None:
                spec, count, _source = hit
                return Issue(
                    NOT_CHECKABLE,
                    f"{_label(root)}GPU nodes {show(node.value, 60)} ({count} x {spec.name}) {WHY}",
                    node.where(path),
                )
    return None


# Engine images by the words in their repository (the engines extract/pod/engine_args recognises).
ENGINE_IMAGES = ("vllm", "sglang", "text-generation-inference", "tensorrt", "trtllm", "ollama", "llama.cpp")
GPU_COUNT_KEYS = ("gpus", "gpu", "numGpus", "gpuCount", "num_gpus")


def _engine_values(root: Mapping, path: str) -> Issue | None:
    """Chart values whose top level names an engine image and a GPU count (silogen's llm-inference-*
    charts: `image: rocm/vllm…`, `model:`, `gpus: 1`), in a layout no reader takes."""
    from kvlint.extract.pod.engine_args import image_repository, is_mock

    image = root.scalar("image")
    if image is None or not isinstance(image.value, str) or is_mock(image.value):
        return None
    repo = image_repository(image.value)
    if not any(word in repo for word in ENGINE_IMAGES):
        return None
    for key in GPU_COUNT_KEYS:
        count = root.scalar(key)
        if count is not None and _positive(count) and str(count.value).strip().isdigit():
            return Issue(
                NOT_CHECKABLE,
                f"values for the engine image {show(image.value, 80)} on {count.value} GPU(s) (`{key}`) {WHY}",
                count.where(path),
            )
    return None


# Options only an LLM engine's command line takes (vLLM, SGLang, TGI spellings): in a container with no image
# they are a patch's additions to a base this file does not hold
ENGINE_FLAGS = re.compile(
    r"^--(tensor-parallel-size|pipeline-parallel-size|max-model-len|gpu-memory-utilization|max-num-seqs|"
    r"quantization|model-path|tp-size|tp|context-length|mem-fraction-static|num-shard|max-total-tokens|"
    r"max-input-length|model-id)(=|$)"
)


def _patch(root: Mapping, path: str) -> Issue | None:
    """A Kubernetes object whose container has no image but engine options in its args (a kustomize patch that
    adds flags to a base): the base decides the engine, the model source and the GPUs."""
    if not isinstance(root.value("kind"), str):
        return None
    for spec in pods.find_pod_specs(root):
        for c in pods.containers(spec.node):
            if c.get("image") is not None:
                continue
            for key in ("args", "command"):
                for item in c.seq(key) or ():
                    if isinstance(item, Scalar) and ENGINE_FLAGS.match(str(item.value or "")):
                        flag = show(str(item.value).split("=")[0], 40)
                        name = show(str(c.value("name") or "?"), 60)
                        return Issue(
                            NOT_CHECKABLE,
                            f"{_label(root)}container {name} has no image but engine options ({flag} …): a patch "
                            "(kustomize) over a base this file does not hold, which decides the engine, the model "
                            "source and the GPUs: not checked; lint the rendered output (`kustomize build`)",
                            scalar_where(item, path),
                        )
    return None


# An accelerator's Kubernetes resource name written as a value (chart or scenario values that choose the
# device: llm-d-benchmark's `accelerator.resource: ibm.com/spyre_pf`), with vendors kvlint does not model
ACCELERATOR_NAME = re.compile(
    r"^(nvidia\.com/gpu|amd\.com/gpu|google\.com/tpu|habana\.ai/gaudi|aws\.amazon\.com/neuron\w*|"
    r"huawei\.com/ascend\w*|ibm\.com/spyre\w*|intel\.com/gpu)$",
    re.I,
)
MODEL_KEYS = ("model", "name", "huggingfaceId", "modelId", "model_id", "modelName")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _accelerator_named(root: Mapping, path: str) -> Issue | None:
    """Values that name an accelerator resource and a Hub model id, in a layout no reader takes (llm-d
    modelservice values are read by their own reader; its chart defaults name only the simulator's model)."""
    from kvlint.extract.kinds import llmd_values

    if llmd_values.is_modelservice(root):
        return None
    device: Scalar | None = None
    model: Scalar | None = None
    for keys, node in _walk(root):
        if not isinstance(node, Scalar) or not isinstance(node.value, str) or not keys:
            continue
        if device is None and ACCELERATOR_NAME.match(node.value):
            device = node
        elif model is None and keys[-1] in MODEL_KEYS and HUB_ID.match(node.value):
            if not ACCELERATOR_NAME.match(node.value):  # a resource's name (Kueue quotas), not a model's
                model = node
    if device is None or model is None:
        return None
    return Issue(
        NOT_CHECKABLE,
        f"{_label(root)}values that run {show(str(model.value), 80)} on {show(str(device.value), 40)} {WHY}",
        device.where(path),
    )
