"""The other published profiles NIM_MODEL_PROFILE could name here, for a fix (Engine.alternatives).

When the profile NIM runs (the one NIM_MODEL_PROFILE names, or NIM's automatic pick) does not fit, another
profile the release publishes for this GPU and count may: a lower precision (fp8 weights) or a larger TP.
NIM starts the profile NIM_MODEL_PROFILE names, by id or descriptive name (docs.nvidia.com/nim/
large-language-models/1.1.0/profiles.html, Profile Selection), so the fix names it by its id, which every
release accepts. Each is planned as NIM would run it (planned.settings with that profile fixed), the smallest
first: fewest GPUs, then fewest bits per weight.
"""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment, inferred
from kvlint.engines.nim import planned, selection
from kvlint.engines.nim.profiles import BACKENDS
from kvlint.record import replace


def alternatives(d: Deployment, arch: Any, gpu: Any, s: Any) -> tuple[tuple[str, str, Any], ...]:
    """(the fix's summary, its message, the settings NIM runs that profile with) for each other published profile runnable
    on the pod's GPUs, the smallest first; () where no list is published or the GPUs are not known."""
    rel, count = planned.published(d), d.gpus_seen()
    if rel is None or gpu is None or count is None or not gpu.engine_bytes:
        return ()
    running = s.extra.get(planned.RUNS)
    tp = d.tensor_parallel if d.tensor_parallel is not None and d.tensor_parallel.origin == "stated" else None
    lora = planned.LORA in d.extra
    others = [
        p
        for p in rel.profiles
        if (not p.gpu or p.gpu == gpu.id)
        and p.gpus <= int(count.value)
        and p.lora == lora
        and p.id != running
        and (tp is None or p.tp == int(tp.value))  # a stated TP sits above the profile's (planned.py)
    ]
    others.sort(key=lambda p: (p.gpus, selection.BITS.get(p.precision, 16), p.name))
    out = []
    for p in others:
        fixed = replace(d, extra={**d.extra, planned.FIXED: inferred(p.id, "a fix's profile")})
        said = f"NIM_MODEL_PROFILE {p.name}"
        message = (
            f"set NIM_MODEL_PROFILE {p.id} ({p.name}: {BACKENDS[p.backend]} "
            f"{p.precision}, TP {p.tp} on {p.gpus} of the pod's GPUs)"
        )
        out.append((said, message, planned.settings(fixed, arch, gpu)))
    return tuple(out)


__all__ = ["alternatives"]
