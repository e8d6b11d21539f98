"""Engine arguments: which engine a container runs, and what its command line and env say.

One module per engine maps options onto the shared Deployment fields; this module finds the
engine's entry point in the container's commands.
"""

from __future__ import annotations

import os

from kvlint.extract.argv import Token
from kvlint.record import record

# Engines kvlint recognises but does not model, with the reason said in KV004.
UNSUPPORTED = {
    "trtllm": "TensorRT-LLM sizes its KV cache from its own engine build (kv_cache_free_gpu_mem_fraction); not modelled",
    "llamacpp": "llama.cpp serves GGUF files with its own memory layout (n_ctx, --cache-type); not modelled",
    "ollama": "Ollama picks context and offload at run time; not modelled",
    "jetstream": "JetStream runs on TPUs; kvlint models GPU memory",
    "nim": "NVIDIA NIM picks its backend (TensorRT-LLM or vLLM) from a profile at start-up; memory not modelled",
    "kaito": "KAITO presets choose the engine and its settings inside the operator; not modelled",
    "other": "a custom serving program; kvlint models vLLM, SGLang and TGI",
}


@record(frozen=True)
class Launch:
    engine: str  # vllm | sglang | tgi | one of UNSUPPORTED
    tokens: list[Token]  # the engine's own arguments (after the entry point)
    entry: Token | None  # the token that named the engine (for locations)
    how: str
    wrapper: str = ""  # a launcher that adds options of its own (NVIDIA Dynamo): unknown options not reported


# NVIDIA Dynamo's worker modules (`python -m dynamo.vllm …`) take the engine's own options plus the
# wrapper's (ai-dynamo/dynamo components/src/dynamo/<backend>/); the frontend, router and planner
# serve no model.
DYNAMO_WORKERS = {"dynamo.vllm": "vllm", "dynamo.sglang": "sglang", "dynamo.trtllm": "trtllm"}


def _base(text: str) -> str:
    return os.path.basename(text.strip())


def find_launch(commands: list[list[Token]], image: str) -> Launch | None:
    """The engine a container starts, from its commands or, failing that, its image."""
    img = image.lower()
    for tokens in commands:
        texts = [t.text for t in tokens]
        for i, text in enumerate(texts):
            base = _base(text)
            nxt = texts[i + 1] if i + 1 < len(texts) else ""
            if base == "vllm" and nxt == "serve":
                return Launch("vllm", tokens[i + 2 :], tokens[i], "vllm serve")
            if text == "-m" and nxt.startswith("vllm.entrypoints"):
                return Launch("vllm", tokens[i + 2 :], tokens[i + 1], f"python -m {nxt}")
            if text == "-m" and nxt in DYNAMO_WORKERS:
                return Launch(
                    DYNAMO_WORKERS[nxt],
                    tokens[i + 2 :],
                    tokens[i + 1],
                    f"python -m {nxt} (NVIDIA Dynamo worker)",
                    wrapper="dynamo",
                )
            if text == "-m" and nxt.startswith("sglang.launch_server"):
                return Launch("sglang", tokens[i + 2 :], tokens[i + 1], "python -m sglang.launch_server")
            if base == "sglang" and nxt in ("serve", "launch_server"):
                return Launch("sglang", tokens[i + 2 :], tokens[i], "sglang serve")
            if base == "text-generation-launcher":
                return Launch("tgi", tokens[i + 1 :], tokens[i], "text-generation-launcher")
            if (
                base in ("trtllm-serve", "tritonserver", "trtllm-llmapi-launch")
                or "tensorrt_llm" in text
                or "tensorrtllm" in text
            ):
                return Launch("trtllm", tokens[i + 1 :], tokens[i], base)
            if base in ("llama-server", "llama-cli") or "llama.cpp" in text:
                return Launch("llamacpp", tokens[i + 1 :], tokens[i], base)
            if base == "ollama" and nxt == "serve":
                return Launch("ollama", [], tokens[i], "ollama serve")
            if base.endswith(".py") and "vllm" in text.lower() and i + 1 < len(tokens):
                # a wrapper script that passes vLLM's own options on (e.g. KAITO's inference_api.py)
                return Launch("vllm", tokens[i + 1 :], tokens[i], f"vLLM wrapper script {base}")
    first = commands[0] if commands else []
    args_only = not first or first[0].text.startswith("-")
    if "nvcr.io/nim/" in img or "/nim/" in img:
        return Launch("nim", first, None, f"NIM image {image}")
    if "jetstream" in img:
        return Launch("jetstream", first, None, f"image {image}")
    if "ollama" in img:
        return Launch("ollama", first, None, f"image {image}")
    if "llama.cpp" in img or "llama-cpp" in img or "llamacpp" in img:
        return Launch("llamacpp", first, None, f"image {image}")
    if ("tensorrt" in img or "trtllm" in img or "tritonserver" in img) and args_only:
        return Launch("trtllm", first, None, f"image {image}")
    if args_only:
        if "text-generation-inference" in img:
            return Launch("tgi", first, None, f"image {image} (entrypoint text-generation-launcher)")
        if "sglang" in img:
            return Launch("sglang", first, None, f"image {image}")
        if "vllm" in img:
            return Launch("vllm", first, None, f"image {image} (entrypoint: the vLLM OpenAI server)")
    elif not _runs_something_else(commands):
        # a start script inside an engine image: the engine is known, its options are not on the
        # command line (what kvlint then cannot check is said, never passed over)
        if "vllm" in img:
            return Launch("vllm", [], None, f"start script in the vLLM image {image}")
        if "tensorrt" in img or "trtllm" in img or "tritonserver" in img:
            return Launch("trtllm", [], None, f"start script in the TensorRT-LLM/Triton image {image}")
    return None


def _runs_something_else(commands: list[list[Token]]) -> bool:
    """Sidecars, helpers and multi-node workers in an engine image (ray start, a worker script that
    joins the leader, sleep, a proxy) do not serve a model of their own."""
    words = [t.text for c in commands for t in c]
    if any(w.startswith("dynamo.") and w not in DYNAMO_WORKERS for w in words):
        return True  # Dynamo's frontend / router / planner
    if any(w == "worker" or "ray_address" in w or w.startswith("--address") or "router" in w for w in words):
        return True
    firsts = {_base(t.text) for c in commands for t in c[:2]}
    return bool(firsts & {"ray", "sleep", "tail", "echo", "sh", "bash", "cat"}) and not any(
        "vllm" in w for w in words
    )
