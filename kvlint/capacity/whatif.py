"""Re-plan with one setting changed, for the fixes findings suggest (fp8 KV, more GPUs, shorter context)."""

from __future__ import annotations

from kvlint import engines
from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.record import replace


def replan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings, **changes) -> Plan:
    return engines.get(s.engine).plan(arch, gpu, replace(s, **changes))


def valid_tp(arch: ModelArch, tp: int) -> bool:
    """vLLM requires the attention heads (and, below the KV-head count, the KV heads) to divide by TP."""
    return arch.query_heads % tp == 0 and (
        tp <= arch.kv_heads
        and arch.kv_heads % tp == 0
        or tp > arch.kv_heads
        and tp % arch.kv_heads == 0
        or arch.mla
    )


def smallest_tp(
    arch: ModelArch, gpu: GpuSpec, s: EngineSettings, need_ok, limit: int = 16
) -> tuple[int, Plan] | None:
    """The smallest power-of-two TP (above the current) whose plan satisfies need_ok(plan); none on
    a MIG slice (an engine cannot spread a model over MIG slices: KV209)."""
    if gpu.mig_profile:
        return None
    tp = max(1, s.tp) * 2
    while tp <= limit:
        if valid_tp(arch, tp):
            p = replan(arch, gpu, s, tp=tp)
            if need_ok(p):
                return tp, p
        tp *= 2
    return None
