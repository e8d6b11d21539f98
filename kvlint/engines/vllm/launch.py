"""Recognising vLLM in a launch: its programs, its images, the wrappers that pass its options on, and
what an image's start script reads when the command line holds no options."""

from __future__ import annotations

from kvlint.deployment import Deployment, inferred
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args import Launch, image_repository, tag_version

IMAGES = ("vllm",)  # a word of the image repository that names a vLLM image


def entry_point(at) -> Launch | None:
    """`vllm serve …` and `python -m vllm.entrypoints…`."""
    if at.base == "vllm" and at.nxt == "serve":
        return Launch("vllm", at.tokens[at.i + 2 :], at.tokens[at.i], "vllm serve")
    if at.text == "-m" and at.nxt.startswith("vllm.entrypoints"):
        return Launch("vllm", at.tokens[at.i + 2 :], at.tokens[at.i + 1], f"python -m {at.nxt}")
    return None


def wrapper_entry(at) -> Launch | None:
    """A wrapper script that passes vLLM's own options on (e.g. KAITO's inference_api.py)."""
    if at.base.endswith(".py") and "vllm" in at.text.lower() and at.i + 1 < len(at.tokens):
        # KAITO's /workspace/vllm/inference_api.py adds --kaito-* options of its own
        kaito = "kaito" if at.base == "inference_api.py" and "/workspace/vllm/" in at.text else ""
        return Launch("vllm", at.tokens[at.i + 1 :], at.tokens[at.i], f"vLLM wrapper script {at.base}", kaito)
    return None


def image_command(first: list[Token], image: str, repository: str) -> Launch | None:
    """Args `serve MODEL --opt …` on a vLLM image: the image's `vllm` entry point runs `vllm serve`."""
    if first and first[0].text == "serve" and _named(repository):
        return Launch(
            "vllm", first[1:], first[0], f"`serve …` on the vLLM image {image}, read as `vllm serve`"
        )
    return None


def image_entrypoint(first: list[Token], image: str, repository: str) -> Launch | None:
    """Nothing but options on the command line: the image's entrypoint is vLLM when the image is a vLLM
    build (its name begins with `vllm`: vllm/vllm-openai, rocm/vllm, opea/vllm-gaudi, vllm-openai-ubi9), or
    when it has vLLM in its name and the options are vLLM's. A name that only holds the word
    (my-vllm-proxy, open-webui-vllm: a proxy, a client of a remote vLLM) with no vLLM option is not."""
    if _named(repository) and (_built(repository) or _engine_options(first)):
        return Launch("vllm", first, None, f"image {image} (entrypoint: the vLLM OpenAI server)")
    return None


def _built(repository: str) -> bool:
    """The image's own name (the repository's last part) begins with an engine word."""
    return any(repository.rsplit("/", 1)[-1].startswith(word) for word in IMAGES)


def _engine_options(first: list[Token]) -> bool:
    """Some word of the command line is one of vLLM's options (an option of any release kvlint knows)."""
    from kvlint.engines.vllm.options import OPTIONS
    from kvlint.extract.pod.argv import split_flag
    from kvlint.extract.pod.engine_args.options import load_table

    table = load_table(OPTIONS, "vllm")
    return any(t.text.startswith("--") and isinstance(table.lookup(split_flag(t)[0]), tuple) for t in first)


def start_script(image: str, repository: str) -> Launch | None:
    if _named(repository):
        return Launch("vllm", [], None, f"start script in the vLLM image {image}")
    return None


def variant(launch: Launch, image: str) -> Launch:
    """vLLM-Omni (vllm-project/vllm-omni) is `vllm serve MODEL --omni` on its own image."""
    if any(t.text == "--omni" for t in launch.tokens) or "vllm-omni" in image_repository(image):
        return Launch("vllm-omni", launch.tokens, launch.entry, f"{launch.how} with vLLM-Omni (--omni)")
    return launch


def image_version(image: str) -> str | None:
    return tag_version(image, IMAGES)


def _named(repository: str) -> bool:
    return any(word in repository for word in IMAGES)


# Start scripts in engine images commonly read these (the script decides; kvlint infers).
SCRIPT_MODEL_ENV = ("MODEL_ID", "MODEL_NAME", "MODEL", "MODEL_PATH", "HF_MODEL_ID")
SCRIPT_SETTINGS_ENV = {
    "MAX_MODEL_LEN": "max_context",
    "MAX_NUM_SEQS": "max_sequences",
    "TENSOR_PARALLEL_SIZE": "tensor_parallel",
    "PIPELINE_PARALLEL_SIZE": "pipeline_parallel",
}


def read_start_script_env(d: Deployment, env: dict[str, EnvVar]) -> None:
    """No options on the command line: what the image's start script reads from the environment."""
    for name in SCRIPT_MODEL_ENV:
        var = env.get(name)
        if var is not None and var.value:
            d.model = inferred(var.value, f"env {name}, read by the image's start script", var.where)
            break
    for name, attr in SCRIPT_SETTINGS_ENV.items():
        var = env.get(name)
        if var is not None and var.value and str(var.value).strip().isdigit():
            setattr(
                d,
                attr,
                inferred(int(var.value), f"env {name}, read by the image's start script", var.where),
            )


KAITO_WEIGHTS = "/workspace/vllm/weights"


def kaito_preset_model(d: Deployment) -> None:
    """KAITO's inference_api.py serves --model /workspace/vllm/weights unless told otherwise (its
    engine defaults); a KAITO preset image holds there the weights of the preset it is named after."""
    from kvlint.catalog import kaito

    image = str(d.image.value) if d.image is not None else ""
    preset = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    hf = kaito.hf_id(preset) if preset else None
    if hf is None or d.image is None:
        return
    d.model = inferred(
        hf,
        f"KAITO's inference_api.py loads {KAITO_WEIGHTS} by default; the preset image {preset} holds {hf} "
        f"there ({kaito.source()})",
        d.image.where,
    )
