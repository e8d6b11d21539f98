"""TensorRT-LLM's memory options: the table is data/memory_options.json."""

from __future__ import annotations

from functools import cache

from kvlint.engines.memory_entry import MemoryOption, from_data


@cache
def table() -> dict[str, MemoryOption]:
    """Option -> what kvlint does with it (data/memory_options.json, read on first use)."""
    return from_data("trtllm", "memory_options")
