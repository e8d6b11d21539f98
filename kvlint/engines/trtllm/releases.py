"""TensorRT-LLM releases: reading a version, and the defaults in force (data/releases.json)."""

from __future__ import annotations

import re

from kvlint.engines import facts

# `1.0.0`, `1.2.0rc6`, `1.1.0rc2.post1`: a release candidate is planned as its release
_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    m = _RELEASE.match(str(text).strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def default(key: str, version_text: str | None) -> facts.Change:
    """The row for `key` at the release (the newest for an unknown one)."""
    return facts.in_force(facts.changes("trtllm"), key, parse_version(version_text))
