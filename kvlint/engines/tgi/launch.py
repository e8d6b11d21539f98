"""Recognising TGI in a launch: its launcher, its images (and its backends' images), its release."""

from __future__ import annotations

from kvlint.extract.pod.argv import Token
from kvlint.extract.pod.engine_args import Launch, tag_version
from kvlint.lazy_re import lazy

IMAGES = ("text-generation-inference", "tgi")  # words of the image repository its release tags are read on
# Image repositories of TGI backends published outside ghcr.io/huggingface/text-generation-inference
BACKEND_IMAGES = ("tgi-gaudi", "tgi-llamacpp")

# Google Cloud's TGI Deep Learning Containers name the release in the repository, CUDA then TGI major-minor:
# `…/huggingface-text-generation-inference-cu124.2-3.ubuntu2204.py311` is built from TGI v2.3.1
# (huggingface/Google-Cloud-Containers@8d6aa78b containers/tgi/README.md `docker build -t …cu124.2-3… -f
# containers/tgi/gpu/2.3.1/Dockerfile`, whose first stage fetches the v2.3.1 tag). A major.minor release is
# that minor's newest patch (engines/tgi/releases.py parse_version).
_GCP_TGI_DLC = lazy(r"huggingface-text-generation-inference-cu\d+\.(\d+)-(\d+)\.")


def entry_point(at) -> Launch | None:
    if at.base == "text-generation-launcher":
        return Launch("tgi", at.tokens[at.i + 1 :], at.tokens[at.i], "text-generation-launcher")
    return None


def image_command(first: list[Token], image: str, repository: str) -> Launch | None:
    """TGI's Gaudi image (huggingface/tgi-gaudi) and a local build of its llama.cpp backend, with only options
    on the command line: TGI's router takes them (engines/tgi/backends.py says which backend)."""
    args_only = not first or first[0].text.startswith("-")
    if any(word in repository for word in BACKEND_IMAGES) and args_only:
        return Launch("tgi", first, None, f"image {image} (TGI backend image)")
    return None


def image_entrypoint(first: list[Token], image: str, repository: str) -> Launch | None:
    if "text-generation-inference" in repository:
        return Launch("tgi", first, None, f"image {image} (entrypoint text-generation-launcher)")
    return None


def image_version(image: str) -> str | None:
    """`ghcr.io/huggingface/text-generation-inference:3.0.1` -> "3.0.1"; a Google Cloud DLC's major-minor."""
    dlc = _GCP_TGI_DLC().search(image.split("@", 1)[0])
    if dlc:
        return f"{dlc.group(1)}.{dlc.group(2)}"
    return tag_version(image, IMAGES)
