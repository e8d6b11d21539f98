"""Compare the figures an author planned with (`budget:`, `architecture:`) against kvlint's.

The budget describes one replica the way the course's planner does: `gpu_memory` is one card,
`weights`, `kv_per_token` and `kv_per_sequence` cover the whole model, `kv_cache` and `reserved`
cover all the replica's GPUs together, `activations` is per GPU, `max_concurrency` counts
sequences of max_context. Verdicts:

- "unit": the declared size matches kvlint's only after swapping 10^3 and 2^10 steps (GB <-> GiB)
- "marketed": gpu_memory is the card's marketed number, not the memory the engine sees
- "query-heads": the figure equals what query heads (instead of KV heads) would give
- "mismatch": off by more than the tolerance for another reason
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kvlint.record import record
from kvlint.units import Size

if TYPE_CHECKING:
    from kvlint.capacity.plan import EngineSettings, Plan
    from kvlint.catalog.arch import ModelArch
    from kvlint.catalog.gpus import GpuSpec

UNIT_TOLERANCE = 0.02
_STEP = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


@record(frozen=True)
class Facts:
    gpu_total: int  # engine-visible bytes of one GPU
    gpu_name: str
    marketed: str | None  # "80 GB"
    weights_total: int
    kv_per_token: int  # whole model, KV heads (the course formula)
    kv_per_token_query: tuple[int, ...]  # whole model with query heads (the classic mistake; MLA as MHA)
    max_context: int
    max_sequences: int
    kv_pool_total: int  # all GPUs of the replica
    reserved_total: int  # all GPUs: everything that is neither weights nor KV pool
    activations: int  # per GPU
    max_concurrency: float
    gpus: int
    unit: str = "GPU"  # what one device is called ("chip" on a TPU: catalog/tpus.py)


@record(frozen=True)
class Check:
    key: str
    declared: float  # bytes for sizes, a count otherwise
    computed: float
    verdict: str  # ok | unit | marketed | query-heads | mismatch
    explain: str  # what kvlint's figure is
    alt: float | None = None  # the declared figure read in the other unit system


def swapped(size: Size) -> float | None:
    """The declared figure with its unit read in the other system (GB <-> GiB), or None."""
    unit = size.unit.lower().rstrip("b")
    letter = unit[:1]
    if letter not in _STEP:
        return None
    step = _STEP[letter]
    if size.system == "binary":
        return float(size.number) * 1000**step
    if size.system == "decimal":
        return float(size.number) * 1024**step
    return None


def _close(a: float, b: float, tol: float) -> bool:
    return b != 0 and abs(a - b) / abs(b) <= tol


def marketed_number(marketed: str | None) -> float | None:
    m = re.match(r"\s*(\d+(?:\.\d+)?)\s*G", marketed or "")
    return float(m.group(1)) if m else None


def compare(budget: dict[str, object], f: Facts, tolerance: float = 0.05) -> list[Check]:
    computed: dict[str, tuple[float, str]] = {
        "gpu_memory": (f.gpu_total, f"the memory the engine sees on a {f.gpu_name}"),
        "weights": (f.weights_total, "the model's weights"),
        "kv_per_token": (f.kv_per_token, "2 x layers x KV heads x head_dim x bytes"),
        "kv_per_sequence": (f.kv_per_token * f.max_context, f"KV per token x {f.max_context:,} tokens"),
        "kv_cache": (f.kv_pool_total, f"the KV-cache pool of all {f.gpus} {f.unit}(s)"),
        "reserved": (f.reserved_total, f"memory that is neither weights nor KV pool, all {f.unit}s"),
        "activations": (f.activations, f"the activation peak per {f.unit}"),
        "max_concurrency": (f.max_concurrency, "sequences of max_context the pool holds"),
    }
    query_forms = {
        "kv_per_token": list(f.kv_per_token_query),
        "kv_per_sequence": [q * f.max_context for q in f.kv_per_token_query],
        "kv_cache": [q * f.max_context * f.max_sequences for q in f.kv_per_token_query],
    }
    out: list[Check] = []
    for key, value in budget.items():
        if key not in computed:
            continue
        target, explain = computed[key]
        declared = float(value.bytes) if isinstance(value, Size) else float(value)  # type: ignore[arg-type]
        hit = [q for q in query_forms.get(key, []) if _close(declared, q, UNIT_TOLERANCE)]
        if hit and not _close(declared, computed_kv(key, f), UNIT_TOLERANCE):
            out.append(Check(key, declared, target, "query-heads", explain, float(hit[0])))
            continue
        if key == "gpu_memory" and isinstance(value, Size):
            n = marketed_number(f.marketed)
            if (
                n is not None
                and float(value.number) == n
                and value.system != "none"
                and not _close(declared, target, 0.005)
            ):
                out.append(Check(key, declared, target, "marketed", explain, swapped(value)))
                continue
        if isinstance(value, Size):
            alt = swapped(value)
            if (
                alt is not None
                and _close(alt, target, UNIT_TOLERANCE)
                and not _close(declared, target, UNIT_TOLERANCE)
            ):
                out.append(Check(key, declared, target, "unit", explain, alt))
                continue
        if target and not _close(declared, target, tolerance):
            out.append(Check(key, declared, target, "mismatch", explain))
        else:
            out.append(Check(key, declared, target, "ok", explain))
    return out


def computed_kv(key: str, f: Facts) -> float:
    """The correct (KV-head) form of a KV figure, whole model."""
    return {
        "kv_per_token": f.kv_per_token,
        "kv_per_sequence": f.kv_per_token * f.max_context,
        "kv_cache": f.kv_per_token * f.max_context * f.max_sequences,
    }.get(key, 0.0)


def facts_for(arch: ModelArch, gpu: GpuSpec, s: EngineSettings, p: Plan) -> Facts:
    """Facts of a planned deployment (model, GPU, settings and plan all known)."""
    from kvlint.capacity.kv import kv_dtype_bytes, run_dtype

    kvb = kv_dtype_bytes(s.kv_cache_dtype, run_dtype(arch.dtype, s.dtype))
    factor = 1 if arch.mla else 2
    per_token = int(factor * arch.attention_layers * arch.kv_heads * arch.head_dim * kvb)
    if arch.mla and arch.mla_dims:
        # MLA planned as multi-head attention: the config's heads x (hidden/heads, the V dim, or the K dim)
        nope, rope, v = arch.mla_dims
        dims = {arch.hidden_size // arch.query_heads, v, nope + rope}
        query = tuple(sorted(int(2 * arch.attention_layers * arch.query_heads * d * kvb) for d in dims))
    else:
        query = (int(2 * arch.attention_layers * arch.query_heads * arch.head_dim * kvb),)
    gpus = s.tp * s.pp
    return Facts(
        gpu_total=p.gpu_total,
        gpu_name=gpu.name,
        marketed=gpu.marketed,
        weights_total=p.weights_total,
        kv_per_token=per_token,
        kv_per_token_query=query,
        max_context=s.max_model_len,
        max_sequences=s.max_num_seqs,
        kv_pool_total=max(0, p.kv_pool) * gpus,
        reserved_total=(p.gpu_total - p.weights_per_gpu - max(0, p.kv_pool)) * gpus,
        activations=p.term("activation peak"),
        max_concurrency=p.max_concurrency,
        gpus=gpus,
        unit=gpu.unit,
    )
