"""Engine arguments: which engine a container runs, and what its command line and env say.

One module per engine maps options onto the shared Deployment fields; this module finds the
engine's entry point in the container's commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kvlint import engines
from kvlint.extract.pod.argv import Token
from kvlint.lazy_re import lazy
from kvlint.record import record

# Engines kvlint recognises but does not model, with the reason said in KV004.
UNSUPPORTED = {
    "jetstream": "JetStream, a TPU engine of its own, is not modelled (on TPUs kvlint plans vLLM only)",
    "kaito": "KAITO's operator picks the parallelism (data parallel when the model is under half of one GPU, "
    "else tensor parallel over a node's GPUs and pipeline parallel over nodes), --max-model-len auto and the "
    "memory fraction from the GPU memory free at start (kaito-project/kaito pkg/model/interface.go, "
    "presets/workspace/inference/vllm/inference_api.py); not modelled",
    "other": f"a custom serving program; kvlint models {engines.modelled()}",
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
    # every command the container runs, the launch's own among them (a start script's `ollama pull MODEL`)
    script: tuple[tuple[Token, ...], ...] = ()


# NVIDIA Dynamo's worker modules (`python -m dynamo.vllm …`) take the engine's own options plus the
# wrapper's (ai-dynamo/dynamo components/src/dynamo/<backend>/); the frontend, router and planner
# serve no model.
DYNAMO_WORKERS = {"dynamo.vllm": "vllm", "dynamo.sglang": "sglang", "dynamo.trtllm": "trtllm"}


VERSION_TAG = lazy(r"^v?(\d+\.\d+(?:\.\d+)?)")
DYNAMO = "dynamo"  # a word of NVIDIA Dynamo's image repositories (nvcr.io/nvidia/ai-dynamo/...)


def tag_version(
    image: str, repositories: tuple[str, ...], pattern: re.Pattern[str] | None = None
) -> str | None:
    """The release an image's tag names when the repository is one of `repositories` (`vllm/vllm-openai:v0.10.0`
    -> "0.10.0"); None for latest/nightly, a digest, or an image of another project. NVIDIA Dynamo's runtime
    images (`nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0`, `sglang-runtime:1.0.1`) are Dynamo's: their tag is
    Dynamo's release, and the engine release inside is not read from it."""
    if "@" in image:
        return None
    repo, _, tag = image.rpartition(":")
    if not repo or "/" in tag or not any(n in repo.lower() for n in repositories) or DYNAMO in repo.lower():
        return None
    m = (pattern or VERSION_TAG()).match(tag)
    return m.group(1) if m else None


def _base(text: str) -> str:
    """The word's file name: os.path.basename of it stripped, without its calls (asked of every word)."""
    word = text.strip()
    return word[word.rfind("/") + 1 :]


def find_launch(commands: list[list[Token]], image: str) -> Launch | None:
    """The engine a container starts, from its commands or, failing that, its image."""
    for tokens in commands:
        texts = [t.text for t in tokens]
        for i, text in enumerate(texts):
            launch = _recognise(_At(tokens, i, text, _base(text), texts[i + 1] if i + 1 < len(texts) else ""))
            if launch is not None:
                return _variant(_with_script(launch, commands), image)
    launch = _from_image(commands, image)
    return _variant(_with_script(launch, commands), image) if launch is not None else None


def _with_script(launch: Launch, commands: list[list[Token]]) -> Launch:
    from kvlint.record import replace

    return replace(launch, script=tuple(tuple(c) for c in commands))


def _recognise(at: _At) -> Launch | None:
    """The first of: an engine's own program, another launcher kvlint knows, a wrapper script that passes
    an engine's options on."""
    for engine in engines.every():
        launch = engine.entry_point(at)
        if launch is not None:
            return launch
    for recognise in ENTRY_POINTS:
        launch = recognise(at)
        if launch is not None:
            return launch
    for engine in engines.every():
        launch = engine.wrapper_entry(at)
        if launch is not None:
            return launch
    return None


def _variant(launch: Launch, image: str) -> Launch:
    """A modelled engine's variant it cannot model (vLLM-Omni)."""
    return engines.get(launch.engine).variant(launch, image) if engines.known(launch.engine) else launch


@record(frozen=True)
class _At:
    """One token of a command, as the entry-point recognisers see it."""

    tokens: list[Token]
    i: int
    text: str
    base: str  # the token's file name (a path's last part)
    nxt: str  # the next token's text, "" at the end


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


# Entry points on a command line of launchers and engines kvlint recognises but does not model, tried
# in this order at each token after the engines' own (the first that matches names the engine).
ENTRY_POINTS: tuple[Callable[[_At], Launch | None], ...] = (
    _dynamo_worker,
    _hf_server,
)


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
    for engine in engines.every():  # `serve MODEL …` on a vLLM image, a TGI backend's image
        launch = engine.image_command(first, image, img)
        if launch is not None:
            return launch
    args_only = not first or first[0].text.startswith("-")
    if "jetstream" in img:
        return Launch("jetstream", first, None, f"image {image}")
    if args_only:
        return _image_entrypoint(first, image, img)
    if not _runs_something_else(commands) and _may_start_the_engine(commands):
        return _start_script(image, img)
    return None


def _may_start_the_engine(commands: list[list[Token]]) -> bool:
    """A command that can be the image's start script: a script (`/start.sh`, an entrypoint, start, run,
    serve or launch program, run by itself or by an interpreter) or one that names an engine; another
    program (nginx, envoy) is not the engine's."""
    words = [t.text for c in commands for t in c]
    if any(s in w for e in engines.every() if (s := e.script_word) for w in words):
        return True
    program = [_base(t.text) for t in commands[0][:2]] if commands else []  # `python3 launch_server.py`
    return any(p.endswith(".sh") or any(w in p for w in _SCRIPT_WORDS) for p in program)


_SCRIPT_WORDS = ("entrypoint", "start", "run", "serve", "launch")


def _image_entrypoint(first: list[Token], image: str, img: str) -> Launch | None:
    """Only options on the command line: the image's own entrypoint is the engine."""
    if "huggingfaceserver" in img:  # kserve/huggingfaceserver: ENTRYPOINT python3 -m huggingfaceserver
        return Launch("hfserver", first, None, f"image {image} (entrypoint python -m huggingfaceserver)")
    for engine in engines.every():
        launch = engine.image_entrypoint(first, image, img)
        if launch is not None:
            return launch
    return None


def _start_script(image: str, img: str) -> Launch | None:
    """A start script inside an engine image: the engine is known, its options are not on the
    command line (what kvlint then cannot check is said, never passed over)."""
    for engine in engines.every():
        launch = engine.start_script(image, img)
        if launch is not None:
            return launch
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
    scripts = [e.script_word for e in engines.every() if e.script_word]
    return bool(firsts & {"ray", "sleep", "tail", "echo", "sh", "bash", "cat"}) and not any(
        s in w for s in scripts for w in words
    )
