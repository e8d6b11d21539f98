"""Small helpers rules share for naming values and pointing at them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvlint import engines
from kvlint.deployment import Deployment, Value
from kvlint.findings import Location
from kvlint.units import tokens

if TYPE_CHECKING:
    from kvlint.capacity.plan import Plan


def unit(gpu: object) -> str:
    """What one device the plan sizes is called ("GPU"; "chip" on a TPU, "TensorCore" on a TPU7x): the
    catalog's word for it (catalog/gpus.py GpuSpec.unit), "GPU" when the device is not known."""
    return str(getattr(gpu, "unit", None) or "GPU")


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


def _attr(engine: str, setting: str) -> str:
    """The Deployment field a setting is ("utilization" is the engine's KV-cache memory share: vLLM
    gpu_memory_utilization, SGLang mem_fraction_static, TGI cuda_memory_fraction)."""
    return (engines.get(engine).fraction_field or setting) if setting == "utilization" else setting


def flag(engine: str, setting: str) -> str:
    """How the setting is spelled for the engine, for fixes; the setting itself when no option of the
    engine sets it."""
    attr = _attr(engine, setting)
    found = engines.get(engine).flag_for(attr)
    return setting if found == attr else found


def spec_key(d: Deployment, setting: str, engine: str) -> str:
    """The name to tell the user: the spec key in a ServingSpec, the engine flag elsewhere."""
    return setting if d.kind == "ServingSpec" else flag(engine, setting)


def knob(d: Deployment, setting: str, s: Any) -> str | None:
    """`spec_key` for the engine as it runs under the settings in force `s` (Engine.knob_for): None when
    what runs reads no knob for the setting, and a fix leaves it out."""
    if d.kind == "ServingSpec":
        return setting
    attr = _attr(s.engine, setting)
    found = engines.get(s.engine).knob_for(attr, s)
    return None if found is None else setting if found == attr else found


def pool_tokens(p: Plan) -> str:
    """The pool's token count as a message gives it. For a hybrid whose state the engine keeps in slots of
    its own (Plan.state_layers), the tokens are its attention layers' and one request may use them all:
    the state layers take one slot per request whatever its length, so the rules count the tokens."""
    if not p.state_layers:
        return f"{tokens(p.kv_tokens)} tokens"
    return (
        f"{tokens(p.kv_tokens)} tokens of its attention layers, all usable by one request; its "
        f"{p.state_layers} state layers take one slot per request instead"
    )


def state_cap_note(p: Plan, stated: int) -> str:
    """Why fewer requests run than stated, when the engine's state slots cap them (SGLang's mamba pool)."""
    if not p.state_cap or p.max_num_seqs != p.state_cap or stated <= p.state_cap:
        return ""
    return (
        f"{engines.display(p.engine)} runs at most {p.state_cap:,} at once, what its {p.state_slots:,} "
        "state slots allow"
    )
