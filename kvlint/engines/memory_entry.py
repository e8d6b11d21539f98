"""One row of an engine's memory-options table (kvlint/extract/pod/engine_args/memory_options.py explains the
statuses), and the reader of the tables, which are data (kvlint/engines/<engine>/data/memory_options.json)."""

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


def from_data(
    engine: str, table: str, details: dict[str, Callable[[str], str | None]] | None = None
) -> dict[str, MemoryOption]:
    """An engine's memory-options table, kvlint/engines/<engine>/data/<table>.json: option -> MemoryOption.
    A row's `detail` names one of `details`, the engine's functions that read the value as written."""
    from kvlint.engines import facts

    out: dict[str, MemoryOption] = {}
    for row in facts.load(engine, table)["rows"]:
        detail = (details or {})[row["detail"]] if "detail" in row else None
        fields = {k: row.get(k, "") for k in ("target", "applied_by", "changes", "source", "said_by")}
        out[row["option"]] = MemoryOption(row["status"], detail=detail, **fields)
    return out
