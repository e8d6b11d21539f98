"""SGLang's memory options: the table is data/memory_options.json (option -> status, the kvlint function that
applies it or what the plan leaves out, the sglang==X:path:line that says so); here is the function that reads
an option's value as written for the row that names it (`detail`)."""

from __future__ import annotations

from functools import cache

from kvlint.engines.memory_entry import MemoryOption, from_data


def _a2a_backend(text: str) -> str | None:
    """--moe-a2a-backend none allocates nothing; any other backend is named."""
    return None if text.strip() == "none" else f" (backend {text.strip()})"


@cache
def table() -> dict[str, MemoryOption]:
    """Option -> what kvlint does with it (data/memory_options.json, read on first use)."""
    return from_data("sglang", "memory_options", {"_a2a_backend": _a2a_backend})
