"""Recognising SGLang in a launch: its programs and its images."""

from __future__ import annotations

from kvlint.extract.pod.argv import Token
from kvlint.extract.pod.engine_args import Launch, tag_version
from kvlint.lazy_re import lazy

IMAGES = ("sglang",)  # a word of the image repository that names an SGLang image
# SGLang changed its memory defaults between post releases (0.4.6.post1 -> post2): keep the suffix
TAG = lazy(r"^v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)")


def entry_point(at) -> Launch | None:
    """`python -m sglang.launch_server …`, `sglang serve …`."""
    if at.text == "-m" and at.nxt.startswith("sglang.launch_server"):
        return Launch("sglang", at.tokens[at.i + 2 :], at.tokens[at.i + 1], "python -m sglang.launch_server")
    if at.base == "sglang" and at.nxt in ("serve", "launch_server"):
        return Launch("sglang", at.tokens[at.i + 2 :], at.tokens[at.i], "sglang serve")
    return None


def image_entrypoint(first: list[Token], image: str, repository: str) -> Launch | None:
    if any(word in repository for word in IMAGES):
        return Launch("sglang", first, None, f"image {image}")
    return None


def image_version(image: str) -> str | None:
    """`lmsysorg/sglang:v0.4.6.post1-cu124` -> "0.4.6.post1"."""
    return tag_version(image, IMAGES, TAG())
