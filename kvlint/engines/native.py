"""Where each engine keeps the settings kvlint's own fields name (the ServingSpec, `kvlint plan`).

kvlint's fields are vLLM's names (`gpu_memory_utilization`, `max_batched_tokens`, ...); a command-line
reader writes an engine's own option either onto that field (SGLang --context-length -> max_context) or,
where the engine's option has its own meaning, under the engine's name in `extra` (SGLang
--mem-fraction-static -> extra["mem_fraction_static"]). A value stated in kvlint's field reaches the
engine's setting here, once, keeping its origin and location: every engine's `settings()` calls `carry`
on its settings in force (engines/filling.py) before it fills a default, so only a setting nobody stated
is named as the engine's default.

Per engine, each field is one of
- `SAME`: the engine reads the field itself;
- an `extra` key (with `invert` when the engine's option is the negation of the field);
- `Absent(reason)`: the engine has no such setting; a stated value gets a KV004 info at it, saying the
  plan does not apply it, unless it is what the engine does anyway (`matches`).
Each engine lists its entries as `native_fields` in its package (kvlint/engines/<engine>/__init__.py); a field
it leaves out is SAME. `tests/test_stated_values.py` checks every setting field of the spec for every engine.
"""

from __future__ import annotations

from typing import Any

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Value
from kvlint.engines.filling import Filling
from kvlint.findings import Issue, Severity
from kvlint.record import record

SAME = ""


@record(frozen=True)
class Extra:
    key: str  # the engine's own setting, as its command-line reader writes it in `extra`
    invert: bool = False  # the engine's option says the opposite (SGLang --disable-hybrid-swa-memory)


@record(frozen=True)
class Absent:
    reason: str  # what the engine does instead, with its source
    matches: Any = None  # a stated value equal to this is what the engine does anyway: nothing to say


Entry = str | Extra | Absent


def entry(engine: str, name: str) -> Entry:
    return fields(engine).get(name, SAME)


def fields(engine: str) -> dict[str, Entry]:
    """The engine's entries (`native_fields` in its package); none for an engine kvlint does not model."""
    return engines.get(engine).native_fields if engines.known(engine) else {}


def carry(f: Filling, engine: str) -> None:
    """Put each value stated in one of kvlint's fields where the engine reads it, among the options in force
    (the engine's own option, when also stated, wins: it is what the engine parses); say when the engine
    has no such setting."""
    d = f.d
    for name, e in fields(engine).items():
        v: Value | None = getattr(d, name)
        if v is None or v.origin == "default":
            continue
        if isinstance(e, Extra) and e.key not in f.options:
            f.options[e.key] = Value(not v.value if e.invert else v.value, v.origin, v.where, v.note)
        elif isinstance(e, Absent) and v.value != e.matches:
            f.said.append(
                Issue(
                    NOT_CHECKABLE,
                    f"{engines.display(engine)} has no {name} setting: {e.reason}; "
                    f"kvlint's plan does not apply {name} {_shown(v.value)}",
                    v.where or d.where,
                    severity=Severity.INFO,
                )
            )


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
