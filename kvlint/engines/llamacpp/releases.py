"""llama.cpp builds and Ollama releases: reading a version, and the defaults in force (data/releases.json for
llama.cpp's builds, data/ollama_releases.json for Ollama's releases)."""

from __future__ import annotations

import re

from kvlint.engines import facts

_BUILD = re.compile(r"^b?(\d+)$")  # `b4729` as image tags spell a build; `4729` as the release table does
_OLLAMA = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """ "b4729" -> (4729,) (a llama.cpp build); "0.6.8" -> (0, 6, 8) (an Ollama release); None otherwise."""
    if not text:
        return None
    t = str(text).strip().lower()
    m = _BUILD.match(t)
    if m:
        return (int(m.group(1)),)
    o = _OLLAMA.match(t)
    if o:
        return int(o.group(1)), int(o.group(2)), int(o.group(3) or 0)
    return None


def llama_default(key: str, version_text: str | None) -> facts.Change:
    """The llama.cpp row for `key` at the build (the newest for an unknown or an Ollama version)."""
    v = parse_version(version_text)
    build = v if v is not None and len(v) == 1 else None
    return facts.in_force(facts.changes("llamacpp"), key, build)


def ollama_default(key: str, version_text: str | None) -> facts.Change:
    v = parse_version(version_text)
    release = v if v is not None and len(v) == 3 else None
    return facts.in_force(facts.changes("llamacpp", "ollama_releases", 3), key, release)
