"""Recognising LMDeploy in a launch: its program, `python -m lmdeploy`, and its images.

LMDeploy's server is `lmdeploy serve api_server MODEL_PATH [options]` (InternLM/lmdeploy@v0.10.0
lmdeploy/cli/serve.py add_parser_api_server; `python -m lmdeploy` runs the same CLI, lmdeploy/__main__.py).
Its images (`openmmlab/lmdeploy:v0.10.2-cu12`, `:latest`) set no ENTRYPOINT or CMD (docker/Dockerfile),
so the command line names the program; only `serve api_server` serves a model over the network.
"""

from __future__ import annotations

from kvlint.extract.pod.argv import Token
from kvlint.extract.pod.engine_args import Launch, tag_version
from kvlint.lazy_re import lazy

IMAGES = ("lmdeploy",)  # a word of the image repository that names an LMDeploy image
SERVER = ("serve", "api_server")
# `v0.10.2-cu12`, `0.7.3`, `v0.6.0a0`: the release; `latest`, `latest-cu11`: none
TAG = lazy(r"^v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)")


def _server(tokens: list[Token], i: int) -> int | None:
    """The index past `serve api_server` when it follows token i, else None."""
    words = [t.text for t in tokens[i + 1 : i + 3]]
    return i + 3 if words == list(SERVER) else None


def entry_point(at) -> Launch | None:
    """`lmdeploy serve api_server …` (a path to it included) and `python -m lmdeploy serve api_server …`."""
    start = None
    if at.base == "lmdeploy":
        start = _server(at.tokens, at.i)
    elif at.text == "-m" and at.nxt == "lmdeploy":
        start = _server(at.tokens, at.i + 1)
    if start is None:
        return None
    return Launch("lmdeploy", at.tokens[start:], at.tokens[at.i], "lmdeploy serve api_server")


def image_version(image: str) -> str | None:
    """`openmmlab/lmdeploy:v0.10.2-cu12` -> "0.10.2"; None for `latest`, a digest or another project's image."""
    return tag_version(image, IMAGES, TAG())
