"""Sizing a planned deployment for `kvlint plan`: concurrency at several context lengths, the
smallest tensor-parallel size that fits, and how the GPU's memory divides. Pure arithmetic over a
plan and its re-plans (report/plan_report.py renders it)."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.capacity.whatif import replan, valid_tp
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.record import record

CONTEXTS = (2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576)
TP_SIZES = (1, 2, 4, 8, 16)


@record(frozen=True)
class ContextRow:
    context: int
    sequences_at_once: float  # sequences of `context` tokens the pool holds at once
    fits: bool  # at least one


@record(frozen=True)
class SmallestFit:
    gpus: int
    tensor_parallel: int
    sequences_at_once: float


def concurrency_by_context(arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> list[ContextRow]:
    """The plan re-made at each context length up to the model's maximum."""
    rows = []
    for ctx in CONTEXTS:
        if ctx > arch.max_positions:
            break
        q = replan(arch, gpu, s, max_model_len=ctx)
        rows.append(ContextRow(ctx, q.max_concurrency, q.max_concurrency >= 1))
    return rows


def smallest_fit(arch: ModelArch, gpu: GpuSpec, s: EngineSettings, sequences: int) -> SmallestFit | None:
    """The smallest valid tensor-parallel size whose weights fit and whose pool holds `sequences`
    sequences of max_model_len at once (None: not up to TP 16; on a MIG slice only TP 1 is tried,
    since an engine cannot spread a model over MIG slices: KV209)."""
    for tp in TP_SIZES:
        if not valid_tp(arch, tp, s.engine, s.version) or (gpu.mig_profile and tp > 1):
            continue
        q = replan(arch, gpu, s, tp=tp)
        if q.weights_per_gpu <= q.weights_limit and q.max_concurrency >= sequences:
            return SmallestFit(tp * s.pp, tp, q.max_concurrency)
    return None


def memory_shares(p: Plan) -> dict[str, float]:
    """Weights, KV pool, the rest of the engine's runtime terms, and headroom, as shares of the GPU."""
    total = p.gpu_total
    parts = {
        "weights": p.weights_per_gpu,
        "KV pool": max(0, p.kv_pool),
        "runtime": sum(t.bytes for t in p.terms if t.label != "weights"),
    }
    parts["headroom"] = max(0, total - sum(parts.values()))
    return {k: v / total for k, v in parts.items()} if total else {}


def fits(p: Plan) -> bool:
    """The weights fit and the pool is positive."""
    return p.weights_per_gpu <= p.weights_limit and p.kv_pool > 0
