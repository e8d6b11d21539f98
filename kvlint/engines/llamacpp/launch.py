"""Recognising llama.cpp's server and Ollama in a launch: their programs, their images, their release.

llama.cpp publishes `ghcr.io/ggml-org/llama.cpp:server` (and `server-cuda`, `server-rocm`, `server-vulkan`,
each also as `…-bNNNN` for build NNNN; the older `ggerganov/llama.cpp:server…` and `full…` images the same
way), whose ENTRYPOINT is `/app/llama-server` (ggml-org/llama.cpp .devops/cuda.Dockerfile `ENTRYPOINT [
"/app/llama-server" ]`): only options on the command line. Ollama's image (`ollama/ollama:0.6.8`) runs
`ollama serve` (ollama/ollama Dockerfile `ENTRYPOINT ["/bin/ollama"]`, `CMD ["serve"]`), which takes its
settings from OLLAMA_* variables, not options. Both run llama.cpp: Ollama's runner links the llama.cpp it
vendors (ollama/ollama llama/llama.cpp, Makefile.sync FETCH_HEAD), so both are this one engine; `extra
["llamacpp_server"]` says which server starts it.
"""

from __future__ import annotations

import os

from kvlint.extract.pod.argv import Token
from kvlint.extract.pod.engine_args import Launch
from kvlint.lazy_re import lazy

LLAMA_IMAGES = ("llama.cpp", "llama-cpp", "llamacpp")  # words of a llama.cpp server image repository
OLLAMA_IMAGES = ("ollama",)
IMAGES = LLAMA_IMAGES + OLLAMA_IMAGES
OLLAMA_HOW = "Ollama"  # a Launch's `how` starts with this for Ollama's server
PROGRAMS = ("llama-server", "server")  # `server` was the binary's name before the llama- prefix (b3170)

# a build in a tag: `-b4729` as llama.cpp publishes it (also bare, `-4729`, as `kvlint upgrade` rewrites a tag)
_BUILD = lazy(r"(?:^|[-_.])(b?\d{4,5})(?:$|[-_.])")
_OLLAMA_TAG = lazy(r"^v?(\d+\.\d+(?:\.\d+)?)")


def is_ollama(launch_how: str) -> bool:
    return launch_how.startswith(OLLAMA_HOW)


def pulled(script: tuple[tuple[Token, ...], ...]) -> list[Token]:
    """The models a container's start script pulls or runs beside `ollama serve` (`ollama serve & sleep 5;
    ollama pull llama3; wait`, the Compose and Kubernetes shape of a server that fetches its model at start), in
    script order, each once: the model the server holds (ollama/ollama cmd/cmd.go: `pull MODEL`, `run MODEL`)."""
    found: dict[str, Token] = {}
    for command in script:
        texts = [t.text for t in command]
        for i, text in enumerate(texts[:-2]):
            if os.path.basename(text) == "ollama" and texts[i + 1] in ("pull", "run"):
                name = next((t for t in command[i + 2 :] if not t.text.startswith("-")), None)
                if name is not None and name.text and "$" not in name.text:
                    found.setdefault(name.text, name)
    return list(found.values())


def entry_point(at) -> Launch | None:
    """`llama-server …` (a path to it included) and `ollama serve`."""
    if at.base == "llama-server" or (at.base == "server" and "llama" in at.text.lower()):
        return Launch("llamacpp", at.tokens[at.i + 1 :], at.tokens[at.i], at.base)
    if at.base == "ollama" and at.nxt == "serve":
        return Launch("llamacpp", [], at.tokens[at.i], f"{OLLAMA_HOW}: ollama serve")
    return None


def wrapper_entry(at) -> Launch | None:
    """`llama-cli` and a program under a llama.cpp checkout (`/llama.cpp/build/bin/…`): llama.cpp's common
    options (common/arg.cpp) on its command line."""
    if at.base == "llama-cli" or "llama.cpp" in at.text:
        return Launch("llamacpp", at.tokens[at.i + 1 :], at.tokens[at.i], at.base)
    return None


def image_command(first: list[Token], image: str, repository: str) -> Launch | None:
    """Ollama's image; a llama.cpp image whose command is a program of its own
    (a wrapper that passes the options after `--` on to llama-server)."""
    if any(
        word in repository for word in OLLAMA_IMAGES
    ):  # its own `ollama serve`, or a script that starts it
        return Launch("llamacpp", [], None, f"{OLLAMA_HOW}: image {image} (ollama serve)")
    if any(word in repository for word in LLAMA_IMAGES) and first and not first[0].text.startswith("-"):
        rest = first[1:]
        if rest and rest[0].text == "--":
            rest = rest[1:]
        return Launch(
            "llamacpp", rest, first[0], f"image {image} ({first[0].text} passes llama-server options)"
        )
    return None


def image_entrypoint(first: list[Token], image: str, repository: str) -> Launch | None:
    """Only options on a llama.cpp server image: its ENTRYPOINT /app/llama-server takes them."""
    if any(word in repository for word in LLAMA_IMAGES):
        return Launch("llamacpp", first, None, f"image {image} (entrypoint llama-server)")
    return None


def start_script(image: str, repository: str) -> Launch | None:
    if any(word in repository for word in OLLAMA_IMAGES):
        return Launch("llamacpp", [], None, f"{OLLAMA_HOW}: image {image} (ollama serve)")
    return None


# The image tags llama.cpp publishes: `full`, `light`, `server` for the CPU build, `<name>-cuda`, `-rocm`,
# `-musa`, `-intel`, `-vulkan` for the others, each also with `-bNNNN` (ggml-org/llama.cpp@03070894
# .github/workflows/docker.yml "Determine tag name": TYPE="" for the cpu config, else "-<tag>").
CPU_TAGS = ("full", "light", "server")


def cpu_build(image: str) -> bool:
    """A llama.cpp image of its CPU build (`ghcr.io/ggml-org/llama.cpp:server`, `:full-b4729`)."""
    repo, _, tag = image.split("@", 1)[0].rpartition(":")
    if not repo or "/" in tag or not any(word in repo.lower() for word in LLAMA_IMAGES):
        return False
    return _BUILD().sub("", tag.lower()) in CPU_TAGS


def image_version(image: str) -> str | None:
    """`ghcr.io/ggml-org/llama.cpp:server-cuda-b4729` -> "b4729"; `ollama/ollama:0.6.8` -> "0.6.8"; None for
    `server`, `latest`, a digest or another project's image."""
    if "@" in image:
        return None
    repo, _, tag = image.rpartition(":")
    if not repo or "/" in tag:
        return None
    low = repo.lower()
    if any(word in low for word in LLAMA_IMAGES):
        m = _BUILD().search(tag.lower())
        return m.group(1) if m else None
    if any(word in low for word in OLLAMA_IMAGES):
        m = _OLLAMA_TAG().match(tag)
        return m.group(1) if m else None
    return None
