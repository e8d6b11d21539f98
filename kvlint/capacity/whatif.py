"""Re-plan with one setting changed, for the fixes findings suggest (fp8 KV, more GPUs, shorter context)."""

from __future__ import annotations

from kvlint import engines
from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.record import replace


def replan(arch: ModelArch, gpu: GpuSpec, s: EngineSettings, **changes) -> Plan:
    return engines.get(s.engine).plan(arch, gpu, replace(s, **changes))


def valid_tp(arch: ModelArch, tp: int, engine: str = "", version: str | None = None) -> bool:
    """Whether `engine` can shard `arch`'s attention `tp` ways (the checks of KV202): the query heads divide
    by TP; the KV heads divide by it, or (vLLM, SGLang) TP is a multiple of them, which replicates them;
    an engine (release `version`) that shards the KV heads without replicating them (TGI; LMDeploy before
    v0.7.0) needs them to divide. An MLA model
    has no KV heads to split."""
    from kvlint.engines.base import KvHeadSharding

    if tp < 1 or arch.query_heads % tp:
        return False
    if arch.mla:
        return True
    if engines.known(engine) and engines.get(engine).kv_head_sharding(version) is KvHeadSharding.SHARDED:
        return arch.kv_heads % tp == 0
    return arch.kv_heads % tp == 0 if tp <= arch.kv_heads else tp % arch.kv_heads == 0


def smallest_tp(
    arch: ModelArch, gpu: GpuSpec, s: EngineSettings, need_ok, limit: int = 16
) -> tuple[int, Plan] | None:
    """The smallest power-of-two TP (above the current) whose plan satisfies need_ok(plan); none on
    a MIG slice (an engine cannot spread a model over MIG slices: KV209)."""
    if gpu.mig_profile:
        return None
    tp = max(1, s.tp) * 2
    while tp <= limit:
        if valid_tp(arch, tp, s.engine, s.version):
            p = replan(arch, gpu, s, tp=tp)
            if need_ok(p):
                return tp, p
        tp *= 2
    return None
