"""`kvlint plan` output: the planned deployment as text with a memory bar, or as JSON."""

from __future__ import annotations

import json
from typing import Any

from kvlint import engines
from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.capacity.sizing import ContextRow, SmallestFit, fits
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.catalog.how import shown as shown_how
from kvlint.record import record
from kvlint.units import gib, human_bytes

_BAR_CHARS = {"weights": "#", "KV pool": "=", "runtime": "+", "headroom": "."}


@record
class PlanReport:
    arch: ModelArch
    gpu: GpuSpec
    settings: EngineSettings
    plan: Plan
    rows: list[ContextRow]
    smallest: SmallestFit | None
    shares: dict[str, float]
    defaults: dict[str, str]  # setting -> the note naming the default applied
    model_how: str = ""  # how the model was resolved (catalog/how.py)


def bar(shares: dict[str, float], width: int = 40) -> str:
    text = "".join(_BAR_CHARS[k] * round(v * width) for k, v in shares.items())
    return text[:width].ljust(width, ".")


def as_data(r: PlanReport) -> dict[str, Any]:
    arch, s, p, g = r.arch, r.settings, r.plan, r.gpu
    smallest = r.smallest
    return {
        "model": arch.id,
        "model_source": arch.source,
        "model_resolution": r.model_how or None,
        "gpu": g.id,
        "gpu_memory_bytes": p.gpu_total,
        "engine": s.engine,
        "tensor_parallel": s.tp,
        "weights_bytes_per_gpu": p.weights_per_gpu,
        "weights_source": p.weights_source,
        "kv_bytes_per_token_per_gpu": p.kv_per_token,
        "kv_cache_bytes_per_gpu": p.kv_pool,
        "kv_cache_tokens": p.kv_tokens,
        "max_context": s.max_model_len,
        "max_sequences": s.max_num_seqs,
        "max_concurrency": round(p.max_concurrency, 4),
        "longest_context_for_max_sequences": p.context_at_max_seqs,
        "concurrency_by_context": [
            {"context": row.context, "sequences_at_once": round(row.sequences_at_once, 2), "fits": row.fits}
            for row in r.rows
        ],
        "smallest_fit": None
        if smallest is None
        else {
            "gpus": smallest.gpus,
            "tensor_parallel": smallest.tensor_parallel,
            "sequences_at_once": round(smallest.sequences_at_once, 2),
        },
        "memory_shares": {k: round(v, 4) for k, v in r.shares.items()},
        "defaults": dict(r.defaults),
    }


def render_json(r: PlanReport) -> str:
    return json.dumps(as_data(r), indent=2) + "\n"


def render_text(r: PlanReport) -> str:
    arch, s, p, g = r.arch, r.settings, r.plan, r.gpu
    smallest, per = r.smallest, g.unit  # "GPU"; "chip" or "TensorCore" on a TPU (catalog/tpus.py)
    out = [
        f"{arch.id} on {s.tp * s.pp} x {g.name} ({gib(p.gpu_total)} as the engine sees it), {engines.display(s.engine)} "
        f"{s.version or ''}".rstrip(),
        "",
    ]
    if not fits(p):
        out.append(
            f"  does not fit: weights {gib(p.weights_per_gpu)} per {per} + runtime leave {gib(p.kv_pool)} for the KV cache "
            f"of the {gib(p.budget)} the engine may use ({p.weights_source})"
        )
        if smallest:
            out.append(
                f"  smallest that fits: {smallest.gpus} x {g.name} (tensor_parallel {smallest.tensor_parallel}), "
                f"{round(smallest.sequences_at_once, 2):.2f} sequences of {s.max_model_len:,} tokens at once"
            )
        else:
            out.append(f"  does not fit on up to 16 x {g.name}")
        return "\n".join(out) + "\n"
    heads = (
        ("MLA latent + DSA indexer keys" if engines.get(p.engine).indexer_keys(arch, p) else "MLA latent")
        if arch.mla
        else f"{max(1, arch.kv_heads // s.tp)} KV heads/{per} x head_dim {arch.head_dim}"
    )
    out += [
        f"  weights        {gib(p.weights_per_gpu)} per {per}  ({p.weights_source})",
        f"  KV per token   {human_bytes(p.kv_per_token)} per {per}  ({arch.attention_layers} layers, {heads})",
        f"  KV pool        {gib(p.kv_pool)} per {per} = {p.kv_tokens:,} tokens",
        f"  memory         [{bar(r.shares)}]",
        "                 "
        + "  ".join(f"{k} {v:.0%}" for k, v in r.shares.items())
        + "   (# weights  = KV  + runtime  . headroom)",
        "",
        "  context      sequences at once",
    ]
    for row in r.rows:
        out.append(
            f"  {row.context:>9,}    {round(row.sequences_at_once, 2):>10,.2f}"
            + ("" if row.fits else "   (does not fit one)")
        )
    out += [
        "",
        f"  at max_context {s.max_model_len:,}: {p.max_concurrency:.2f} sequences at once; "
        f"{s.max_num_seqs:,} sequences get {p.context_at_max_seqs:,} tokens each",
    ]
    if smallest:
        out.append(
            f"  smallest that fits: {smallest.gpus} x {g.name} (tensor_parallel {smallest.tensor_parallel})"
        )
    else:
        out.append(f"  does not fit on up to 16 x {g.name}")
    for key, note in r.defaults.items():
        out.append(f"  ({key}: {note})")
    if shown_how(r.model_how):
        out.append(f"  ({shown_how(r.model_how)})")
    return "\n".join(out) + "\n"


def _fleet_lines(reports: list[PlanReport]) -> list[str]:
    """Where the deployment fits as asked, and on how many of the others it would."""
    fit = [r for r in reports if fits(r.plan)]
    miss = [r for r in reports if not fits(r.plan)]
    first = reports[0]
    s = first.settings
    out = [
        f"{first.arch.id} at {s.tp * s.pp} GPU{'s' if s.tp * s.pp != 1 else ''} on {len(reports)} GPU types"
    ]
    if fit:
        out.append(
            "  fits on:         "
            + ", ".join(
                f"{r.gpu.name} ({r.plan.max_concurrency:.2f} sequences of {r.settings.max_model_len:,} tokens)"
                for r in fit
            )
        )
    if miss:
        out.append(
            "  does not fit on: "
            + ", ".join(
                f"{r.gpu.name} ("
                + (
                    f"needs {r.smallest.gpus}, tensor_parallel {r.smallest.tensor_parallel}"
                    if r.smallest
                    else "no tensor parallelism over MIG slices: a larger profile"
                    if r.gpu.mig_profile
                    else "not on up to 16"
                )
                + ")"
                for r in miss
            )
        )
    return out


def render_fleet_text(reports: list[PlanReport]) -> str:
    parts = ["\n".join(_fleet_lines(reports)) + "\n"]
    parts += [render_text(r) for r in reports]
    return "\n".join(parts)


def render_fleet_json(reports: list[PlanReport]) -> str:
    data = {
        "fits_on": [r.gpu.id for r in reports if fits(r.plan)],
        "does_not_fit_on": [r.gpu.id for r in reports if not fits(r.plan)],
        "plans": [as_data(r) for r in reports],
    }
    return json.dumps(data, indent=2) + "\n"
