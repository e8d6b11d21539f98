"""TGI's memory options: the table is data/memory_options.json (launcher option or its environment form ->
status, the kvlint function that applies it or what the plan leaves out, the launcher or server line that
says so); here is the function that reads an option's value as written for the row that names it (`detail`)."""

from __future__ import annotations

from functools import cache

from kvlint.engines.memory_entry import MemoryOption, from_data


def _speculate(text: str) -> str | None:
    """--speculate 0 is no speculation (models/model.py `speculate != 0`)."""
    return None if text.strip() == "0" else ""


@cache
def table() -> dict[str, MemoryOption]:
    """Option -> what kvlint does with it (data/memory_options.json, read on first use)."""
    return from_data("tgi", "memory_options", {"_speculate": _speculate})
