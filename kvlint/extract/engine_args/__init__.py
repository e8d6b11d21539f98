"""Engine arguments: which engine a container runs, and what its command line and env say.

One module per engine maps options onto the shared Deployment fields; this module finds the
engine's entry point in the container's commands.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from kvlint.extract.argv import Token
from kvlint.record import record

# Engines kvlint recognises but does not model, with the reason said in KV004.
UNSUPPORTED = {
    "trtllm": "TensorRT-LLM sizes its KV cache from its own engine build (kv_cache_free_gpu_mem_fraction); not modelled",
    "llamacpp": "llama.cpp serves GGUF files with its own memory layout (n_ctx, --cache-type); not modelled",
    "ollama": "Ollama picks context and offload at run time; not modelled",
    "jetstream": "JetStream runs on TPUs; kvlint models GPU memory",
    "nim": "NVIDIA NIM picks its backend (TensorRT-LLM or vLLM) from a profile at start-up; memory not modelled",
    "kaito": "KAITO's operator picks the parallelism (data parallel when the model is under half of one GPU, "
    "else tensor parallel over a node's GPUs and pipeline parallel over nodes), --max-model-len auto and the "
    "memory fraction from the GPU memory free at start (kaito-project/kaito pkg/model/interface.go, "
    "presets/workspace/inference/vllm/inference_api.py); not modelled",
    "other": "a custom serving program; kvlint models vLLM, SGLang and TGI",
    "hfserver": "KServe's Hugging Face server on transformers; not modelled",
    "simulator": "an engine simulator (it answers the engine's API without loading a model): nothing to check",
    "vllm-omni": "vLLM-Omni (`--omni`) runs a multi-stage pipeline whose stages and their GPUs come from its "
    "stage config, not vLLM's own options; not modelled",
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
    for tokens in commands:
        texts = [t.text for t in tokens]
        for i, text in enumerate(texts):
            at = _At(tokens, i, text, _base(text), texts[i + 1] if i + 1 < len(texts) else "")
            for recognise in ENTRY_POINTS:
                launch = recognise(at)
                if launch is not None:
                    return _omni(launch, image)
    launch = _from_image(commands, image)
    return _omni(launch, image) if launch is not None else None


def _omni(launch: Launch, image: str) -> Launch:
    """vLLM-Omni (vllm-project/vllm-omni) is `vllm serve MODEL --omni` on its own image."""
    if launch.engine == "vllm" and (
        any(t.text == "--omni" for t in launch.tokens) or "vllm-omni" in image_repository(image)
    ):
        return Launch("vllm-omni", launch.tokens, launch.entry, f"{launch.how} with vLLM-Omni (--omni)")
    return launch


@record(frozen=True)
class _At:
    """One token of a command, as the entry-point recognisers see it."""

    tokens: list[Token]
    i: int
    text: str
    base: str  # the token's file name (a path's last part)
    nxt: str  # the next token's text, "" at the end


def _vllm_serve(at: _At) -> Launch | None:
    if at.base == "vllm" and at.nxt == "serve":
        return Launch("vllm", at.tokens[at.i + 2 :], at.tokens[at.i], "vllm serve")
    return None


def _vllm_module(at: _At) -> Launch | None:
    if at.text == "-m" and at.nxt.startswith("vllm.entrypoints"):
        return Launch("vllm", at.tokens[at.i + 2 :], at.tokens[at.i + 1], f"python -m {at.nxt}")
    return None


def _dynamo_worker(at: _At) -> Launch | None:
    if at.text == "-m" and at.nxt in DYNAMO_WORKERS:
        return Launch(
            DYNAMO_WORKERS[at.nxt],
            at.tokens[at.i + 2 :],
            at.tokens[at.i + 1],
            f"python -m {at.nxt} (NVIDIA Dynamo worker)",
            wrapper="dynamo",
        )
    return None


def _hf_server(at: _At) -> Launch | None:
    if at.text == "-m" and at.nxt == "huggingfaceserver":
        return Launch("hfserver", at.tokens[at.i + 2 :], at.tokens[at.i + 1], "python -m huggingfaceserver")
    return None


def _sglang_module(at: _At) -> Launch | None:
    if at.text == "-m" and at.nxt.startswith("sglang.launch_server"):
        return Launch("sglang", at.tokens[at.i + 2 :], at.tokens[at.i + 1], "python -m sglang.launch_server")
    return None


def _sglang_serve(at: _At) -> Launch | None:
    if at.base == "sglang" and at.nxt in ("serve", "launch_server"):
        return Launch("sglang", at.tokens[at.i + 2 :], at.tokens[at.i], "sglang serve")
    return None


def _tgi_launcher(at: _At) -> Launch | None:
    if at.base == "text-generation-launcher":
        return Launch("tgi", at.tokens[at.i + 1 :], at.tokens[at.i], "text-generation-launcher")
    return None


def _trtllm_program(at: _At) -> Launch | None:
    if (
        at.base in ("trtllm-serve", "tritonserver", "trtllm-llmapi-launch")
        or "tensorrt_llm" in at.text
        or "tensorrtllm" in at.text
    ):
        return Launch("trtllm", at.tokens[at.i + 1 :], at.tokens[at.i], at.base)
    return None


def _llamacpp_program(at: _At) -> Launch | None:
    if at.base in ("llama-server", "llama-cli") or "llama.cpp" in at.text:
        return Launch("llamacpp", at.tokens[at.i + 1 :], at.tokens[at.i], at.base)
    return None


def _ollama_serve(at: _At) -> Launch | None:
    if at.base == "ollama" and at.nxt == "serve":
        return Launch("ollama", [], at.tokens[at.i], "ollama serve")
    return None


def _vllm_wrapper_script(at: _At) -> Launch | None:
    # a wrapper script that passes vLLM's own options on (e.g. KAITO's inference_api.py)
    if at.base.endswith(".py") and "vllm" in at.text.lower() and at.i + 1 < len(at.tokens):
        # KAITO's /workspace/vllm/inference_api.py adds --kaito-* options of its own
        kaito = "kaito" if at.base == "inference_api.py" and "/workspace/vllm/" in at.text else ""
        return Launch("vllm", at.tokens[at.i + 1 :], at.tokens[at.i], f"vLLM wrapper script {at.base}", kaito)
    return None


# Entry points on a command line, one recogniser per engine or launcher, tried in this order at
# each token (the first that matches names the engine).
ENTRY_POINTS: tuple[Callable[[_At], Launch | None], ...] = (
    _vllm_serve,
    _vllm_module,
    _dynamo_worker,
    _hf_server,
    _sglang_module,
    _sglang_serve,
    _tgi_launcher,
    _trtllm_program,
    _llamacpp_program,
    _ollama_serve,
    _vllm_wrapper_script,
)


def _trtllm_image(img: str) -> bool:
    return "tensorrt" in img or "trtllm" in img or "tritonserver" in img


# Image repositories of TGI backends published outside ghcr.io/huggingface/text-generation-inference
TGI_BACKEND_IMAGES = ("tgi-gaudi", "tgi-llamacpp")

# Images that imitate an engine's API for tests and demos (aibrix/vllm-mock, llm-d's inference-sim).
MOCK_IMAGES = ("mock", "inference-sim", "simulator")


def is_mock(image: str) -> bool:
    return any(word in image_repository(image) for word in MOCK_IMAGES)


def image_repository(image: str) -> str:
    """The image without its tag or digest, lower-cased: `hiyouga/verl:…-vllm0.8.4-…` names verl, not
    vLLM (a tag that lists the engine as a dependency does not make the image an engine image)."""
    name = image.strip().lower().split("@", 1)[0]
    head, sep, tail = name.rpartition(":")
    return head if sep and "/" not in tail else name


def _from_image(commands: list[list[Token]], image: str) -> Launch | None:
    """No entry point on the command line: the engine an image implies, if any."""
    img = image_repository(image)
    if any(word in img for word in MOCK_IMAGES):
        return None  # a stand-in that answers the engine's API without a model (no GPU memory to check)
    first = commands[0] if commands else []
    if first and first[0].text == "serve" and "vllm" in img:
        # args `serve MODEL --opt …` on a vLLM image: the image's `vllm` entry point runs `vllm serve`
        return Launch(
            "vllm", first[1:], first[0], f"`serve …` on the vLLM image {image}, read as `vllm serve`"
        )
    args_only = not first or first[0].text.startswith("-")
    if "nvcr.io/nim/" in img or "/nim/" in img:
        return Launch("nim", first, None, f"NIM image {image}")
    if "jetstream" in img:
        return Launch("jetstream", first, None, f"image {image}")
    if "ollama" in img:
        return Launch("ollama", first, None, f"image {image}")
    if any(word in img for word in TGI_BACKEND_IMAGES) and args_only:
        # TGI's Gaudi image (huggingface/tgi-gaudi) and a local build of its llama.cpp backend: TGI's
        # router takes the options (extract/engine_args/tgi_backends.py says which backend)
        return Launch("tgi", first, None, f"image {image} (TGI backend image)")
    if "llama.cpp" in img or "llama-cpp" in img or "llamacpp" in img:
        return Launch("llamacpp", first, None, f"image {image}")
    if _trtllm_image(img) and args_only:
        return Launch("trtllm", first, None, f"image {image}")
    if args_only:
        return _image_entrypoint(first, image, img)
    if not _runs_something_else(commands):
        return _start_script(image, img)
    return None


def _image_entrypoint(first: list[Token], image: str, img: str) -> Launch | None:
    """Only options on the command line: the image's own entrypoint is the engine."""
    if "huggingfaceserver" in img:  # kserve/huggingfaceserver: ENTRYPOINT python3 -m huggingfaceserver
        return Launch("hfserver", first, None, f"image {image} (entrypoint python -m huggingfaceserver)")
    if "text-generation-inference" in img:
        return Launch("tgi", first, None, f"image {image} (entrypoint text-generation-launcher)")
    if "sglang" in img:
        return Launch("sglang", first, None, f"image {image}")
    if "vllm" in img:
        return Launch("vllm", first, None, f"image {image} (entrypoint: the vLLM OpenAI server)")
    return None


def _start_script(image: str, img: str) -> Launch | None:
    """A start script inside an engine image: the engine is known, its options are not on the
    command line (what kvlint then cannot check is said, never passed over)."""
    if "vllm" in img:
        return Launch("vllm", [], None, f"start script in the vLLM image {image}")
    if _trtllm_image(img):
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
