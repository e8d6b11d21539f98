"""Ollama library tags -> the model and GGUF file type they pull (data/ollama_tags.json, each alias with its source).

A library model is `NAME[:TAG]`: `NAME` alone is `NAME:latest`; a short tag (`27b`, `latest`) is an alias of one
explicit tag of the same blob (`27b-instruct-q4_0`); an explicit tag is a flavour and a file type
(`27b-instruct` + `q4_0`). The table knows each flavour's Hugging Face base and the file types the library lists
for it, and each alias's explicit tag. A tag it does not hold is unknown, said so, never guessed: a user's model
(`user/model:tag`) is not the library's, a size the library does not list has no row, a look-alike name has no
family.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from typing import Any

from kvlint.record import record

TAGS = os.path.join(os.path.dirname(__file__), "data", "ollama_tags.json")
# how a model reference may name the library (ollama://, the registry's host and namespace)
_PREFIXES = ("ollama://", "registry.ollama.ai/library/", "registry.ollama.ai/", "library/")
_QUANT = re.compile(r"^(?P<flavour>.+)-(?P<quant>q[2-8]_[0-9a-z_]+|fp16|bf16)$", re.IGNORECASE)


@record(frozen=True)
class Tag:
    """What an Ollama library tag pulls: the Hugging Face base, the GGUF file type, and where that is read."""

    name: str  # NAME:TAG as written, normalised
    base: str  # the Hugging Face id of the model the GGUF was converted from
    file_type: str  # the llama.cpp file type, lower case (q4_k_m, q4_0, f16 …)
    source: str


@cache
def _table() -> dict[str, Any]:
    with open(TAGS, encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def is_tag(ref: str) -> bool:
    """A reference written the library's way (`gemma2:27b`, `ollama://phi4`): no Hub organisation, no path."""
    text = _strip(ref)
    return bool(text) and "/" not in text and not text.startswith((".", "~"))


def _strip(ref: str) -> str:
    text = ref.strip()
    for prefix in _PREFIXES:
        if text.lower().startswith(prefix):
            return text[len(prefix) :]
    return text


def resolve(ref: str) -> tuple[Tag | None, str]:
    """The tag's model and file type, or None and why it is not known."""
    text = _strip(ref)
    if "/" in text:
        return None, (
            f"{text!r} is a user's model (namespace {text.split('/')[0]!r}), not an Ollama library tag: what it"
            " holds is not published in the library"
        )
    name, _, tag = text.partition(":")
    name, tag = name.lower(), tag or "latest"
    fam = _table()["families"].get(name)
    if fam is None:
        return None, f"{name!r} is not a model of the Ollama library in kvlint's table ({_source()})"
    alias = fam["aliases"].get(tag)
    explicit = alias["tag"] if alias is not None else tag
    m = _QUANT.match(explicit)
    flavour, quant = (m["flavour"], m["quant"]) if m else (explicit, "")
    base = fam["flavours"].get(flavour)
    listed = [q.lower() for q in fam["quants"].get(flavour, [])]
    if base is None or quant.lower() not in listed:
        sizes = ", ".join(sorted(fam["aliases"]))
        return None, (
            f"{name}:{tag} is not a tag kvlint's table holds for {name} (tags it knows: {sizes}, and"
            f" <flavour>-<type> of {', '.join(sorted(fam['flavours']))}; {fam['page']})"
        )
    how = f"{fam['page']}: {name}:{tag}" + (f" = {name}:{explicit} ({alias['evidence']})" if alias else "")
    return Tag(f"{name}:{tag}", base, _file_type(quant), f"{how}; {_source()}"), ""


def _file_type(quant: str) -> str:
    """The library's tag spelling (`q4_K_M`, `fp16`) as llama.cpp's file type name (`q4_k_m`, `f16`)."""
    q = quant.lower()
    return "f16" if q == "fp16" else q


def _source() -> str:
    return str(_table()["source"]).split(":", 1)[0]


__all__ = ["Tag", "is_tag", "resolve"]
