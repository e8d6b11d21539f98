"""The one engine registry: the engines kvlint models, each a package `kvlint.engines.<name>` whose
`ENGINE` implements `kvlint.engines.base.Engine`.

The names are also what the command line, the spec and the configuration accept. A package loads the
first time a run asks for its engine, so a run pays only for the engines it meets. Adding an engine is
its folder and one line in `ENGINES`.
"""

from __future__ import annotations

from importlib import import_module
from typing import cast

from kvlint.deployment import DEFAULT_ENGINE
from kvlint.engines.base import Engine

# name -> the name messages print; the order is the order launches are recognised in
ENGINES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "tgi": "TGI",
    "llamacpp": "llama.cpp",
    "lmdeploy": "LMDeploy",
    "nim": "NVIDIA NIM",
    "trtllm": "TensorRT-LLM",
}

# A deployment that names no modelled engine is accounted for as this one.
DEFAULT = DEFAULT_ENGINE


def names() -> tuple[str, ...]:
    return tuple(ENGINES)


def known(name: str) -> bool:
    """The engine is one kvlint models."""
    return name in ENGINES


def modelled() -> str:
    """The engines kvlint models, as messages name them: "vLLM, SGLang, ... and TensorRT-LLM"."""
    shown = list(ENGINES.values())
    return ", ".join(shown[:-1]) + f" and {shown[-1]}" if len(shown) > 1 else "".join(shown)


def display(name: str) -> str:
    """`vllm` -> `vLLM`; a name kvlint does not model prints as given."""
    return ENGINES.get(name, name)


_LOADED: dict[str, Engine] = {}
_EVERY: tuple[Engine, ...] = ()


def get(name: str) -> Engine:
    """Engine `name` (the default engine for a name kvlint does not model)."""
    key = name if name in ENGINES else DEFAULT
    engine = _LOADED.get(key)
    if engine is None:
        engine = _LOADED[key] = cast("Engine", import_module(f"{__name__}.{key}").ENGINE)
    return engine


def every() -> tuple[Engine, ...]:
    """Every engine, in `ENGINES` order (loads each package: recognising a launch asks them all).
    Kept once made: a command line is recognised word by word, and an args list of 70,000 words
    asked the import system for each engine twice a word."""
    global _EVERY
    if not _EVERY:
        _EVERY = tuple(get(name) for name in ENGINES)
    return _EVERY


def called(kind: str, word: str) -> Engine | None:
    """The engine an input kind's word names (KubeAI's `engine: VLLM`, llm-d's container `vllm`), as each
    engine declares its words (`Engine.goes_by`); compared lower-cased; None when no engine goes by it there."""
    said = word.lower()
    return next((e for e in every() if said in e.goes_by.get(kind, ())), None)


def named_in(kind: str, text: str) -> Engine | None:
    """The first engine (in `ENGINES` order) one of whose words for this input kind is part of the text
    (KServe's runtime and model-format names: `kserve-vllm-runtime`); None when none is."""
    said = text.lower()
    return next((e for e in every() if any(w in said for w in e.goes_by.get(kind, ()))), None)


__all__ = [
    "DEFAULT",
    "ENGINES",
    "Engine",
    "called",
    "display",
    "every",
    "get",
    "known",
    "named_in",
    "names",
]
