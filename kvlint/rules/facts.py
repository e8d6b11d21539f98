"""Small helpers rules share for naming values and pointing at them."""

from __future__ import annotations

from kvlint import engines
from kvlint.deployment import Deployment, Value
from kvlint.findings import Location


def where_of(d: Deployment, *values: Value | None, stated_only: bool = True) -> Location:
    """The first value written in the file (or, failing that, any located value; then the workload)."""
    for v in values:
        if v is not None and v.where is not None and (v.origin == "stated" or not stated_only):
            return v.where
    if stated_only:
        for v in values:
            if v is not None and v.where is not None:
                return v.where
    return d.args_where or d.where


def shown(v: Value | None, fmt: str = "{:,}") -> str:
    """'8,192' when stated, '8,192 (vLLM default ...)' when defaulted or inferred."""
    if v is None:
        return "unknown"
    text = (
        fmt.format(v.value)
        if isinstance(v.value, (int, float)) and not isinstance(v.value, bool)
        else str(v.value)
    )
    return text if v.origin == "stated" else f"{text} ({v.note or v.origin})"


def flag(engine: str, setting: str) -> str:
    """How the setting is spelled for the engine, for fixes ("utilization" is the engine's
    KV-cache memory share: vLLM gpu_memory_utilization, SGLang mem_fraction_static, TGI
    cuda_memory_fraction); the setting itself when no option of the engine sets it."""
    e = engines.get(engine)
    attr = (e.fraction_field or setting) if setting == "utilization" else setting
    found = e.flag_for(attr)
    return setting if found == attr else found


def spec_key(d: Deployment, setting: str, engine: str) -> str:
    """The name to tell the user: the spec key in a ServingSpec, the engine flag elsewhere."""
    return setting if d.kind == "ServingSpec" else flag(engine, setting)
