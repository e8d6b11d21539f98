"""Where each engine keeps the settings kvlint's own fields name (the ServingSpec, `kvlint plan`).

kvlint's fields are vLLM's names (`gpu_memory_utilization`, `max_batched_tokens`, ...); a command-line
reader writes an engine's own option either onto that field (SGLang --context-length -> max_context) or,
where the engine's option has its own meaning, under the engine's name in `extra` (SGLang
--mem-fraction-static -> extra["mem_fraction_static"]). A value stated in kvlint's field reaches the
engine's setting here, once, keeping its origin and location: every engine's `settings()` calls `carry`
before it fills a default, so only a setting nobody stated is named as the engine's default.

Per engine, each field is one of
- `SAME`: the engine reads the field itself;
- an `extra` key (with `invert` when the engine's option is the negation of the field);
- `Absent(reason)`: the engine has no such setting; a stated value gets a KV004 info at it, saying the
  plan does not apply it, unless it is what the engine does anyway (`matches`).
`tests/test_stated_values.py` checks that every setting field of the spec has an entry for every engine.
"""

from __future__ import annotations

from typing import Any

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, Value
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

_ARGS = "launcher/src/main.rs Args"

FIELDS: dict[str, dict[str, Entry]] = {
    "vllm": {},  # kvlint's fields are vLLM's names: every one is SAME
    "sglang": {
        # server_args.py ServerArgs: mem_fraction_static is the share of the memory free before loading that
        # weights and the KV pool may take (sglang/plan.py explains the arithmetic)
        "gpu_memory_utilization": Extra("mem_fraction_static"),
        # --chunked-prefill-size: the tokens one prefill step runs (kvlint's EngineSettings.max_batched_tokens)
        "max_batched_tokens": Extra("chunked_prefill_size"),
        "enforce_eager": Extra("disable_cuda_graph"),
        "hybrid_kv_cache_manager": Extra("disable_hybrid_swa_memory", invert=True),
    },
    "tgi": {
        "gpu_memory_utilization": Extra(
            "cuda_memory_fraction"
        ),  # --cuda-memory-fraction / CUDA_MEMORY_FRACTION
        "max_batched_tokens": Extra("max_batch_prefill_tokens"),  # the warm-up's prefill budget
        "pipeline_parallel": Absent(f"the launcher shards tensors only (--num-shard; {_ARGS})", matches=1),
        "data_parallel": Absent(f"one launcher serves one replica ({_ARGS})", matches=1),
        "block_size": Absent(
            "the attention backend sets the block size (server/text_generation_server/models/globals.py "
            "BLOCK_SIZE, by ATTENTION)"
        ),
        "enforce_eager": Absent(
            f"--cuda-graphs 0 turns CUDA graphs off ({_ARGS}), which kvlint's plan leaves out", matches=False
        ),
        "hybrid_kv_cache_manager": Absent("every layer keeps KV for every token", matches=False),
    },
}


def entry(engine: str, name: str) -> Entry:
    return FIELDS.get(engine, {}).get(name, SAME)


def carry(d: Deployment, engine: str) -> None:
    """Put each value stated in one of kvlint's fields where the engine reads it (the engine's own option,
    when also stated, wins: it is what the engine parses); say when the engine has no such setting."""
    for name, e in FIELDS.get(engine, {}).items():
        v: Value | None = getattr(d, name)
        if v is None or v.origin == "default":
            continue
        if isinstance(e, Extra) and e.key not in d.extra:
            d.extra[e.key] = Value(not v.value if e.invert else v.value, v.origin, v.where, v.note)
        elif isinstance(e, Absent) and v.value != e.matches:
            said = Issue(
                NOT_CHECKABLE,
                f"{engines.display(engine)} has no {name} setting: {e.reason}; "
                f"kvlint's plan does not apply {name} {_shown(v.value)}",
                v.where or d.where,
                severity=Severity.INFO,
            )
            if said not in d.issues:  # settings() filled again on the same deployment
                d.issues.append(said)


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
