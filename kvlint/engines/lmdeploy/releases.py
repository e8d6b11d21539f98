"""LMDeploy releases: reading a version, and the defaults in force by release (data/releases.json)."""

from __future__ import annotations

import re

from kvlint.engines import facts

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.post(\d+))?")


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """ "0.10.2" -> (0, 10, 2); "v0.5.2.post1" -> (0, 5, 2, 1); None for "latest" or no text."""
    if not text:
        return None
    m = _VERSION.match(str(text).strip().lower())
    if not m:
        return None
    parts = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    return parts + ((int(m.group(4)),) if m.group(4) else ())


def default(key: str, version_text: str | None) -> facts.Change:
    """The row for `key` in force at the release (the newest row for an unknown release)."""
    return facts.in_force(facts.changes("lmdeploy"), key, parse_version(version_text))


__all__ = ["default", "parse_version"]
