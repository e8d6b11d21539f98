"""TGI's releases: reading a version, and what the router says by release when a stated length does not fit."""

from __future__ import annotations

import re

NEWEST_MODELLED = (3, 3)  # the newest release line modelled (v3.3.7 read)
LATEST_PATCH = 999  # a major.minor image tag (ghcr.io/huggingface/text-generation-inference:1.4) floats to its newest patch


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """(major, minor, patch); a tag without a patch is the newest patch of that minor, since TGI's
    major.minor image tags move with each patch release."""
    if not text:
        return None
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", str(text).strip())
    if not m:
        return None
    major, minor, patch = m.groups()
    return int(major), int(minor), int(patch) if patch is not None else LATEST_PATCH


def tgi_router_refusal(version_text: str | None, max_total: int) -> str:
    """The router's error when the stated max_total_tokens is above the batch total the warm-up
    inferred: router/src/main.rs up to v2.0.x ("`max_total_tokens` must be <= `max_batch_total_tokens`"),
    V3Error/V2Error::NotEnoughMemory from v2.1 (backends/v3/src/lib.rs `check_max_batch_total_tokens`)."""
    version = parse_version(version_text)
    if version is not None and version < (2, 1):
        return "`max_total_tokens` must be <= `max_batch_total_tokens`"
    return f"Not enough memory to handle `max_total_tokens={max_total}`"
