"""TGI's llama.cpp backend (its router's own options): the table is data/llamacpp_memory_options.json."""

from __future__ import annotations

from functools import cache

from kvlint.engines.memory_entry import MemoryOption, from_data


@cache
def table() -> dict[str, MemoryOption]:
    """Option -> what kvlint does with it (data/llamacpp_memory_options.json, read on first use)."""
    return from_data("tgi", "llamacpp_memory_options")
