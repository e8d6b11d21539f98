"""Recognising an NVIDIA NIM container, and the model its image serves.

An LLM-specific NIM is one image per model, `nvcr.io/nim/<org>/<name>:<tag>`, whose entrypoint starts the
server with no arguments (docs.nvidia.com/nim/large-language-models/1.12.0/configuration.html: the
container is configured by `-e` variables); data/images.json names the Hugging Face checkpoint each image
serves. The multi-LLM NIM (`nvcr.io/nim/nvidia/llm-nim`) serves the model NIM_MODEL_NAME names
(`hf://org/name`), as NIM 2's images do with NIM_MODEL_PATH
(docs.nvidia.com/nim/large-language-models/2.0.9/reference/environment-variables.html).

The same image also runs NIM's utilities when one is its command (docs.nvidia.com/nim/large-language-models/
1.0.0/utilities.html: `list-model-profiles`, `download-to-cache`, and `create-model-store`, which writes a
profile's files to a model store; the `nim_`-named forms are the same programs, e.g. nim_list_model_profiles,
docs.nvidia.com/nim/riva/asr/1.3.2/utilities.html): they print or download a profile and exit, serving
nothing, so such a container is no NIM server (a Job that fills a model cache, kserve/scripts/*.yaml in
NVIDIA/nim-deploy).
"""

from __future__ import annotations

from functools import cache

from kvlint.extract.pod.argv import Token
from kvlint.extract.pod.engine_args import Launch

REGISTRY = "nvcr.io/nim/"
IMAGES = (REGISTRY,)
UTILITIES = frozenset(
    {
        "list-model-profiles",
        "download-to-cache",
        "create-model-store",
        "nim_list_model_profiles",
        "nim_download_to_cache",
        "nim_create_model_store",
    }
)


def is_nim(repository: str) -> bool:
    """`repository`: the image without its tag, lower-cased (a mirror's `…/nim/meta/…` included)."""
    return REGISTRY in repository or "/nim/" in repository


def image_command(first: list[Token], image: str, repository: str) -> Launch | None:
    """A NIM image runs its own entrypoint whatever the command line holds, unless that is one of NIM's
    utilities (no server: None)."""
    if is_nim(repository) and not runs_utility(first):
        return Launch("nim", first, None, f"NIM image {image}")
    return None


def runs_utility(first: list[Token]) -> bool:
    """The command line starts one of NIM's utilities (by its name, or its path in the image)."""
    return bool(first) and first[0].text.strip().rsplit("/", 1)[-1] in UTILITIES


def image_name(image: str) -> str | None:
    """`nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3` -> "meta/llama-3.1-8b-instruct"; None for another image."""
    repo = image.strip().lower().split("@", 1)[0]
    head, sep, tail = repo.rpartition(":")
    if sep and "/" not in tail:
        repo = head
    _, found, name = repo.partition("/nim/") if "/nim/" in repo else ("", "", "")
    return name if found and name.count("/") == 1 else None


def image_tag(image: str) -> str | None:
    repo = image.strip().split("@", 1)[0]
    _, sep, tail = repo.rpartition(":")
    return tail if sep and "/" not in tail else None


@cache
def _table() -> dict[str, tuple[str, str]]:
    from kvlint.engines import facts

    return {r["image"]: (r["model"], r["source"]) for r in facts.load("nim", "images")["rows"]}


def model_of(name: str) -> tuple[str, str] | None:
    """The Hugging Face id (and its source) the LLM-specific NIM image `org/name` serves; None when the
    table does not list it."""
    return _table().get(name)
