"""One row of an engine's memory-options table (memory_options.py explains the statuses)."""

from __future__ import annotations

from collections.abc import Callable

from kvlint.record import record

MODELLED, NOT_MODELLED, NO_EFFECT = "modelled", "not modelled", "no effect"


@record(frozen=True)
class MemoryOption:
    status: str  # MODELLED | NOT_MODELLED | NO_EFFECT
    target: str = ""  # the Deployment field or extra key the reader writes ("" when it is not read)
    applied_by: str = (
        ""  # modelled: the function that applies it (not modelled: the part of it that is applied)
    )
    changes: str = ""  # what it changes in GPU memory (not modelled: what the plan leaves out)
    source: str = ""  # the engine line / PR that says so
    said_by: str = ""  # not modelled, but a plan note already names it: no KV004 of its own
    # not modelled: given the value as written, what to add to `changes`, or None when that value changes
    # nothing kvlint leaves out (a KV connector that transfers from the pool in place)
    detail: Callable[[str], str | None] | None = None


def modelled(target: str, applied_by: str, source: str = "") -> MemoryOption:
    return MemoryOption(MODELLED, target, applied_by, source=source)


def not_modelled(
    changes: str,
    source: str,
    target: str = "",
    said_by: str = "",
    detail: Callable[[str], str | None] | None = None,
) -> MemoryOption:
    return MemoryOption(NOT_MODELLED, target, changes=changes, source=source, said_by=said_by, detail=detail)


def no_effect(why: str, source: str, target: str = "", applied_by: str = "") -> MemoryOption:
    return MemoryOption(NO_EFFECT, target, applied_by, changes=why, source=source)
