"""Which TGI backend an image runs, from its name and tag.

TGI v3 publishes one image per backend, its tag the release plus a label extension
(huggingface/text-generation-inference .github/workflows/build.yaml "Construct hardware variables",
`type=semver,pattern={{version}}${{ env.LABEL_EXTENSION }}`): none for the CUDA server, `-rocm`
(Dockerfile_amd, from v1.4), `-intel` (v2.1-v2.2, XPU), `-intel-xpu` / `-intel-cpu` (Dockerfile_intel
PLATFORM=xpu / cpu, from v2.3), `-trtllm` (Dockerfile_trtllm, from v3.1), `-neuron` (Dockerfile.neuron,
from v3.2), `-gaudi` (Dockerfile_gaudi, from v3.3). Before v3.3 the Gaudi server was its own image,
`ghcr.io/huggingface/tgi-gaudi` (huggingface/tgi-gaudi); the llama.cpp backend is built locally
(docs/source/backends/llamacpp.md: `docker build -t tgi-llamacpp … -f Dockerfile_llamacpp`).

ROCm runs the CUDA server's Python code (server/text_generation_server; utils/import_utils.py
`SYSTEM = "rocm"` takes `get_cuda_free_memory`), so its memory accounting is the CUDA server's; its
image sets `ENV ATTENTION=paged` (Dockerfile_amd from v2.3.1, PR #2579), so blocks of 16. The other backends
size memory by rules of their own, said in `REASONS`.
"""

from __future__ import annotations

import re

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, inferred, stated
from kvlint.findings import Issue

SRC = "huggingface/text-generation-inference@v3.3.7"

# tag label extension -> backend; longer extensions first (`-intel-cpu` before `-intel`)
TAG_SUFFIXES = (
    ("-intel-cpu", "intel-cpu"),
    ("-intel-xpu", "intel-xpu"),
    ("-intel", "intel-xpu"),
    ("-rocm", "rocm"),
    ("-trtllm", "trtllm"),
    ("-neuron", "neuron"),
    ("-gaudi", "gaudi"),
    ("-llamacpp", "llamacpp"),
)
# image repositories of a TGI backend built outside the main image line
# (openEuler's CPU build, openeuler/text-generation-inference-cpu, as opea-project/GenAIExamples@15b0d468
# CodeGen/docker_compose/intel/cpu/xeon/compose_tgi_openeuler.yaml runs it)
REPOSITORIES = (
    ("tgi-gaudi", "gaudi"),
    ("tgi-llamacpp", "llamacpp"),
    ("text-generation-inference-cpu", "cpu"),
    ("huggingface-text-generation-inference-tpu", "tpu"),  # Google Cloud's TGI-on-TPU container (optimum-tpu)
)

# Backends whose memory kvlint does not model, and why (each from the backend's source at SRC).
REASONS = {
    "intel-cpu": "TGI's Intel CPU build (Dockerfile_intel PLATFORM=cpu) runs on the host CPU and sizes its KV cache "
    "from host memory (server/text_generation_server/utils/import_utils.py get_cpu_free_memory: psutil available "
    "x 0.95 / world size); kvlint models GPU memory",
    "cpu": "a CPU build of TGI (the image name says -cpu) runs its server with no GPU: SYSTEM cpu sizes the KV cache "
    "from host memory (server/text_generation_server/utils/import_utils.py get_cpu_free_memory: psutil available "
    "x 0.95 / world size); kvlint models GPU memory",
    "tpu": "TGI on Google TPUs (Google Cloud's huggingface-text-generation-inference-tpu container, built from "
    "huggingface/optimum-tpu) sizes memory on the TPU through JAX/XLA, which kvlint does not model (on TPUs it "
    "plans vLLM only)",
    "intel-xpu": "TGI's Intel XPU build (Dockerfile_intel PLATFORM=xpu) runs on Intel GPUs: free memory from "
    "torch.xpu.mem_get_info x XPU_MEMORY_FRACTION (default 0.9; CUDA_MEMORY_FRACTION is not read), blocks of 64 "
    "(ATTENTION=flashdecoding-ipex) (utils/import_utils.py get_xpu_free_memory); kvlint's GPU catalog has no Intel GPU",
    "neuron": "TGI's Neuron backend (backends/neuron) runs on AWS Inferentia/Trainium: optimum-neuron compiles the "
    "model ahead of time for a fixed batch_size (MAX_BATCH_SIZE) and sequence_length (MAX_TOTAL_TOKENS) over "
    "HF_NUM_CORES NeuronCores, the KV cache laid out at compile time (backends/neuron/server/text_generation_server/"
    "tgi_env.py neuron_config_to_env); kvlint models GPU memory",
    "gaudi": "TGI's Gaudi backend (backends/gaudi; before v3.3 the huggingface/tgi-gaudi image) runs on Intel Gaudi "
    "HPUs: after its warm-up it keeps (1 - CUDA_MEMORY_FRACTION) of the free memory for the runtime and "
    "TGI_GRAPH_RESERVED_MEM (default 0.1) of the rest for HPU graphs (backends/gaudi/server/text_generation_server/"
    "models/flash_causal_lm.py warmup); kvlint models NVIDIA and AMD GPU memory",
    "trtllm": "TGI's TensorRT-LLM backend (backends/trtllm) serves an engine built beforehand (--model-id names the "
    "engine folder; its batch size and sequence length are fixed at build time) and sizes the KV cache with "
    "TensorRT-LLM's KvCacheConfig defaults (backends/trtllm/csrc/backend.cpp executor_config); kvlint does not "
    "model TensorRT-LLM engines",
}


def backend_of_image(image: str) -> tuple[str, str] | None:
    """(backend, how it was read) for a TGI image, or None when the image is not one of TGI's."""
    from kvlint.extract.pod.engine_args import image_repository

    repo = image_repository(image)
    for word, backend in REPOSITORIES:
        if word in repo:
            return backend, f"the image {image} is TGI's {backend} build ({word})"
    if "text-generation-inference" not in repo:
        return None
    tag = image.strip().lower().split("@", 1)[0][len(repo) :].lstrip(":")
    for suffix, backend in TAG_SUFFIXES:
        if tag.endswith(suffix) or f"{suffix}-" in tag:
            return (
                backend,
                f"the image tag {tag} carries TGI's {suffix} label ({SRC} .github/workflows/build.yaml)",
            )
    return "cuda", f"the image {image} is TGI's CUDA server"


def apply(d: Deployment) -> None:
    """Record the backend the image selects; a backend kvlint does not model is one KV004 saying why."""
    if d.image is None:
        return
    found = backend_of_image(str(d.image.value))
    if found is None:
        return
    backend, how = found
    where = d.image.where or d.where
    d.extra["tgi_backend"] = stated(backend, where, how)
    reason = REASONS.get(backend, "")
    if backend == "llamacpp":
        from kvlint.engines.tgi.llamacpp import describe, priceable

        reason = describe(d)
        if priceable(d):  # resolve adds the KV cache's size once it knows the model, then says KV004
            d.backend_not_planned = stated(reason, where)
            reason = ""
    if reason:
        d.issues.append(Issue(NOT_CHECKABLE, f"{d.label()}: {reason}: not checked", where))
    if backend in REASONS or backend == "llamacpp":
        d.extra["unsupported"] = stated(f"tgi-{backend}", where)
        return
    if backend == "rocm" and "attention" not in d.extra:
        version = (
            re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", str(d.engine_version.value)) if d.engine_version else None
        )
        # a major.minor tag floats to its newest patch (2.3 -> 2.3.1)
        if version is None or (int(version[1]), int(version[2]), int(version[3] or 999)) >= (2, 3, 1):
            d.extra["attention"] = inferred(
                "paged",
                "set by the TGI ROCm image (Dockerfile_amd, v2.3.1-v3.3.7: ENV ATTENTION=paged)",
                where,
            )
