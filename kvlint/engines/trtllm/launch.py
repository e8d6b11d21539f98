"""Recognising TensorRT-LLM in a launch: its programs, its images, its release.

`trtllm-serve [serve] MODEL …` (tensorrt_llm/commands/serve.py, a click group whose default command is
`serve`), `python -m tensorrt_llm.commands.serve`, the MPI launcher `trtllm-llmapi-launch trtllm-serve …`
(the options are trtllm-serve's), and NVIDIA's images `nvcr.io/nvidia/tensorrt-llm/release:1.0.0`.
Triton's TensorRT-LLM backend (`tritonserver --model-repository …`, the tensorrtllm_backend launch scripts)
reads its settings from the model repository's config.pbtxt, not from the command line (options.py says
what kvlint does with it). NVIDIA Dynamo's worker `python -m dynamo.trtllm` is recognised with the other
Dynamo workers (kvlint/extract/pod/engine_args) and its options read here (options.py).
"""

from __future__ import annotations

from kvlint.extract.pod.argv import Token
from kvlint.extract.pod.engine_args import Launch, tag_version
from kvlint.lazy_re import lazy

# words of an image repository that name TensorRT-LLM's images (NVIDIA's release and Dynamo's runtime
# images, Triton's -trtllm- image tags are read by `image_version`)
IMAGES = ("tensorrt-llm", "tensorrt_llm", "tensorrtllm", "trtllm")
TRITON = "tritonserver"
SERVE = "trtllm-serve"
TRITON_HOW = "Triton"  # a Launch's `how` starts with this for Triton's TensorRT-LLM backend
# NVIDIA's release tags: `1.0.0`, `1.2.0rc6`, `1.1.0rc2.post1`
_TAG = lazy(r"^v?(\d+\.\d+\.\d+(?:rc\d+)?(?:\.post\d+)?)")
# the package as a module or a path (`tensorrt_llm.serve`, `/app/tensorrt_llm/run.py`); not a word that
# only begins with it, as a NIM profile name does (`download-to-cache --profile tensorrt_llm-l40s-bf16-tp2-…`)
_PACKAGE = lazy(r"(?:^|[/.=])tensorrt_llm(?:$|[./])")
# tensorrtllm_backend's tools/fill_template.py, run before `tritonserver` on the tensorrt_llm model's
# `…/tensorrt_llm/config.pbtxt` with `engine_dir:…/tensorrt_llm/1`: its arguments are files, not a program
FILL_TEMPLATE = "fill_template.py"


def is_triton(how: str) -> bool:
    return how.startswith(TRITON_HOW)


def entry_point(at) -> Launch | None:
    """`trtllm-serve …`, `python -m tensorrt_llm.commands.serve …`, `tritonserver …` and a tensorrtllm_backend
    launch script (`launch_triton_server.py`, a `--triton_model_repo_dir=…/tensorrtllm_backend/…`)."""
    if at.base == SERVE:
        return Launch("trtllm", at.tokens[at.i + 1 :], at.tokens[at.i], SERVE)
    if at.text == "-m" and at.nxt.startswith("tensorrt_llm.commands.serve"):
        return Launch("trtllm", at.tokens[at.i + 2 :], at.tokens[at.i + 1], SERVE)
    if at.base == TRITON or "tensorrtllm_backend" in at.text or at.base == "launch_triton_server.py":
        return Launch("trtllm", at.tokens[at.i + 1 :], at.tokens[at.i], f"{TRITON_HOW}: {at.base}")
    return None


def wrapper_entry(at) -> Launch | None:
    """`trtllm-llmapi-launch` with no trtllm-serve after it, or another tensorrt_llm module: TensorRT-LLM,
    options unknown (its own script)."""
    if any(t.text.endswith(FILL_TEMPLATE) for t in at.tokens[: min(at.i, 2)]):  # `[python3] fill_template.py`
        return None
    if at.base == "trtllm-llmapi-launch" or _PACKAGE().search(at.text):
        return Launch("trtllm", [], at.tokens[at.i], at.base, wrapper="script")
    return None


def _ours(repository: str) -> bool:
    return any(word in repository for word in IMAGES) or TRITON in repository


def image_entrypoint(first: list[Token], image: str, repository: str) -> Launch | None:
    """Only options on a TensorRT-LLM image: NVIDIA's release image has no server ENTRYPOINT (it opens a
    shell), so options alone start nothing kvlint can read; said as TensorRT-LLM with no options."""
    if _ours(repository):
        how = f"{TRITON_HOW}: image {image}" if TRITON in repository else f"image {image}"
        return Launch("trtllm", first, None, how, wrapper="script")
    return None


def start_script(image: str, repository: str) -> Launch | None:
    if _ours(repository):
        how = (
            f"{TRITON_HOW}: image {image}"
            if TRITON in repository
            else f"start script in the TensorRT-LLM image {image}"
        )
        return Launch("trtllm", [], None, how, wrapper="script")
    return None


def image_version(image: str) -> str | None:
    """`nvcr.io/nvidia/tensorrt-llm/release:1.0.0` -> "1.0.0"; `…:1.2.0rc6` -> "1.2.0rc6"; None for Dynamo's
    runtime images (their tag is Dynamo's release), Triton's (its release, not TensorRT-LLM's), a digest."""
    if TRITON in image.rpartition(":")[0].lower():
        return None
    return tag_version(image, IMAGES, _TAG())
