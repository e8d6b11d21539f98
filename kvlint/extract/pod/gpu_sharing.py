"""GPUs handed out in parts: MIG slices and shared (time-sliced / MPS) GPUs, from a pod's resources
and node labels.

MIG: `nvidia.com/mig-3g.40gb: 1` (the device plugin's mixed strategy), `nvidia.com/gpu: 1` on a node
labelled `nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-3g.40gb` or `nvidia.com/mig.config:
all-3g.40gb` (single strategy), and GKE's `cloud.google.com/gke-gpu-partition-size: 3g.40gb`. The
engine sees the slice's memory (catalog/mig.py), so the deployment's GPU becomes the slice.

Shared: `nvidia.com/gpu.shared` (time-slicing or MPS with renameByDefault), a `-SHARED` product
label, or `nvidia.com/gpu.sharing-strategy: time-slicing|mps`. Several pods then use one card's
memory; the file-level check (link/sharing.py) adds up what each of them may take.

The slice is looked up in the GPU catalog here, on the card the node labels chose (gpu_selectors.py says
why that choice is made in extract): the profiles a card offers and the slice's memory are the catalog's
(catalog/mig.py), and a profile the card lacks is reported at the label or resource that asks for it.
"""

from __future__ import annotations

from kvlint.catalog import gpus as catalog
from kvlint.catalog import mig, tpus
from kvlint.codes import UNKNOWN_GPU
from kvlint.deployment import Deployment, inferred, stated
from kvlint.findings import Issue, Location
from kvlint.load.tree import Mapping, Scalar

NOT_MODELLED = {
    "tpu": "runs on Google TPUs; kvlint models the memory of NVIDIA and AMD GPUs (vLLM on TPU sizes "
    "its KV cache from TPU HBM by another path: JAX/XLA, not CUDA)",
    "neuron": "runs on AWS Neuron (Inferentia/Trainium); kvlint models the memory of NVIDIA and AMD GPUs "
    "(the Neuron SDK compiles the model with fixed batch and sequence buckets, not a CUDA KV pool)",
    "gaudi": "runs on Intel Gaudi (habana.ai/gaudi); kvlint models the memory of NVIDIA and AMD GPUs "
    "(vLLM on Gaudi, the HPU plugin, reserves memory for HPU graphs by its own rules, not modelled)",
    "ascend": "runs on Huawei Ascend NPUs (huawei.com/Ascend*, vllm-ascend); kvlint models the memory of NVIDIA "
    "and AMD GPUs (vllm-ascend sizes its KV cache on the NPU by its own rules, not modelled)",
    "cpu": "runs on the CPU (a CPU build or --device cpu, and no GPU requested): not a GPU workload; kvlint "
    "models the memory of NVIDIA and AMD GPUs (vLLM's CPU backend keeps its KV cache in host memory, "
    "VLLM_CPU_KVCACHE_SPACE GiB: vllm==0.10.1:vllm/envs.py:479)",
}
# Engine builds for one accelerator, by the words in their image name (repository, not tag):
# vllm-project/vllm-ascend, opea/vllm-gaudi, HabanaAI's vllm-fork (…-hpu), AWS Neuron DLCs, and the CPU
# builds of vLLM (public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo, vllm/vllm-openai-cpu, rh-aiservices-bu's
# vllm-cpu-openai-ubi9).
IMAGE_ACCELERATORS = (
    ("ascend", "ascend"),
    ("gaudi", "gaudi"),
    ("habana", "gaudi"),
    ("-hpu", "gaudi"),
    ("neuron", "neuron"),
    ("-cpu", "cpu"),
)


def why_not_modelled(d: Deployment, accelerator: str) -> str:
    """Why a workload on this non-GPU accelerator is not checked (its KV004), or '' for a TPU one whose engine
    plans on TPU chips when the node label names a chip whose HBM is known (catalog/tpus.py)."""
    from kvlint import engines

    if accelerator != "tpu" or not (engines.known(d.engine_name) and engines.get(d.engine_name).plans_on_tpu):
        return NOT_MODELLED[accelerator]
    spec = catalog.lookup(str(d.gpu.value)) if d.gpu is not None else None
    display = engines.display(d.engine_name)
    if spec is None:
        return (
            "runs on Google TPUs whose generation the file does not state (no cloud.google.com/gke-tpu-accelerator "
            f"node label kvlint knows): {display} sizes its KV cache on TPU from the chip's HBM, not checked"
        )
    if not spec.engine_bytes:
        why = tpus.not_planned_why(spec.id)
        return (
            f"runs on {spec.name} ({d.gpu.describe() if d.gpu else ''}); kvlint knows no HBM figure JAX reports "
            f"for this chip (bytes_limit), which {display} sizes its KV cache from{f'; {why}' if why else ''}: "
            "not checked"
        )
    return ""


def accelerator_of_image(image: str) -> str | None:
    """The non-GPU accelerator an engine image is built for, when the pod requests no GPU."""
    from kvlint.extract.pod.engine_args import image_repository

    repo = image_repository(image)
    return next((accel for word, accel in IMAGE_ACCELERATORS if word in repo), None)


PARTITION_KEYS = ("cloud.google.com/gke-gpu-partition-size", "nvidia.com/mig.config")
SHARING_KEY = "nvidia.com/gpu.sharing-strategy"

Labels = list[tuple[str, list[str], Location]]


def apply(d: Deployment, root: Mapping, pod: Mapping, container: Mapping, labels: Labels, path: str) -> None:
    del pod, container  # the resources were read into d already; kept for symmetry with callers
    gpu_res = (d.gpu_resource or "") if d.gpus_per_pod is not None else ""
    profile = _mig_profile(d, gpu_res, labels)
    if profile is not None:
        _mig(d, *profile)
    shared = gpu_res == "nvidia.com/gpu.shared"
    for key, values, _where in labels:
        if key == SHARING_KEY and any(v in ("time-slicing", "mps") for v in values):
            shared = True
        if key == "nvidia.com/gpu.product" and any(v.upper().endswith("-SHARED") for v in values):
            shared = True
    if shared and d.gpus_per_pod is not None:
        d.gpu_shared = stated(True, d.gpus_per_pod.where, "a shared (time-sliced or MPS) GPU")
    replicas = root.at("spec", "replicas")
    if d.gpus_per_pod is not None and isinstance(replicas, Scalar) and isinstance(replicas.value, int):
        if replicas.value > 0:  # the pods that may share a card (link/sharing.py counts them)
            d.pod_replicas = stated(replicas.value, replicas.where(path), "spec.replicas")


def _mig_profile(d: Deployment, gpu_res: str, labels: Labels) -> tuple[str, Location, str] | None:
    """The MIG slice the pod asks for: its resource (mixed strategy), else a partition node label."""
    if gpu_res.startswith("nvidia.com/mig-"):
        prof = mig.resource_profile(gpu_res)
        if prof and d.gpus_per_pod is not None and d.gpus_per_pod.where is not None:
            return (prof, d.gpus_per_pod.where, f"resource {gpu_res} (MIG mixed strategy)")
    for key, values, where in labels:
        if key in PARTITION_KEYS and values:
            prof = mig.normalise(values[0].removeprefix("all-"))
            if prof:
                return (prof, where, f"node label {key}={values[0]}")
    return None


def _mig(d: Deployment, profile: str, where: Location, how: str) -> None:
    d.extra["mig_profile"] = stated(profile, where, how)
    current = catalog.lookup(str(d.gpu.value)) if d.gpu is not None else None
    if current is not None and current.mig_profile:
        return  # the product label already names the slice
    if current is not None:
        spec = catalog.slice_spec(current.id, profile)
        if spec is None:
            offered = mig.profiles_of(current.id)
            d.issues.append(
                Issue(
                    UNKNOWN_GPU,
                    f"MIG profile {profile} does not exist on {current.name}"
                    + (
                        f" (its profiles: {', '.join(offered)})"
                        if offered
                        else " (no MIG profiles known for it)"
                    )
                    + ": no node offers this slice and the pod stays Pending",
                    where,
                    fix=f"request one of {', '.join(offered)}"
                    if offered
                    else "check the card and the profile",
                )
            )
            d.gpu = inferred(f"{current.id}:{profile}", how, where)  # unknown: KV002 above says why
            return
        d.gpu = inferred(spec.id, f"{how} on {current.name} ({d.gpu.describe() if d.gpu else ''})", where)
        return
    spec, parents = catalog.smallest_slice(profile)
    if spec is None:
        d.issues.append(
            Issue(
                UNKNOWN_GPU,
                f"MIG profile {profile} is not a profile of any card kvlint knows",
                where,
                fix="check the profile name against `nvidia-smi mig -lgip`",
            )
        )
        return
    note = f"{how}; the card is not stated: the smallest {profile} slice of " + ", ".join(parents)
    d.gpu = inferred(spec.id, note, where)
