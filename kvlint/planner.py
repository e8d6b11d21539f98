"""`kvlint plan`: the course's capacity planner, with the engine's own accounting.

Weights, KV per token, the KV pool, concurrency at several context lengths, the longest context
for N sequences, and the smallest GPU count that fits — as text with a memory bar, or JSON.
"""

from __future__ import annotations

import json

from kvlint.capacity.whatif import replan, valid_tp
from kvlint.codes import UNKNOWN_GPU, UNKNOWN_MODEL
from kvlint.deployment import Deployment, stated
from kvlint.findings import Location
from kvlint.resolve import Defaults, resolve
from kvlint.units import gib, human_bytes, parse_count

CONTEXTS = (2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576)


def _bar(p, width: int = 40) -> tuple[str, dict[str, float]]:
    total = p.gpu_total
    parts = {
        "weights": p.weights_per_gpu,
        "KV pool": max(0, p.kv_pool),
        "runtime": sum(t.bytes for t in p.terms if t.label != "weights"),
    }
    parts["headroom"] = max(0, total - sum(parts.values()))
    shares = {k: v / total for k, v in parts.items()} if total else {}
    chars = {"weights": "#", "KV pool": "=", "runtime": "+", "headroom": "."}
    bar = "".join(chars[k] * round(shares[k] * width) for k in parts)
    return bar[:width].ljust(width, "."), shares


def plan_command(model: str, gpu: str, fmt: str, opts: dict) -> tuple[str, int]:
    where = Location("<plan>", 1, 1)
    d = Deployment(file="<plan>", where=where, kind="plan", name=model)
    d.model = stated(model, where)
    d.gpu = stated(gpu, where)
    d.engine = stated(opts.get("engine") or "vllm", where)
    try:
        if opts.get("engine_version"):
            d.engine_version = stated(opts["engine_version"], where)
        if opts.get("context"):
            d.max_context = stated(parse_count(opts["context"]).value, where)
        if opts.get("sequences"):
            d.max_sequences = stated(parse_count(opts["sequences"]).value, where)
        if opts.get("gpus"):
            d.tensor_parallel = stated(int(opts["gpus"]), where)
        if opts.get("utilization"):
            d.gpu_memory_utilization = stated(float(opts["utilization"]), where)
        if opts.get("kv_cache_dtype"):
            d.kv_cache_dtype = stated(opts["kv_cache_dtype"], where)
        if opts.get("quantization"):
            d.quantization = stated(opts["quantization"], where)
    except ValueError as exc:
        return f"kvlint: {exc}\n", 2
    r = resolve(d, Defaults())
    problems = [i for i in r.issues if i.code in (UNKNOWN_GPU, UNKNOWN_MODEL)]
    if problems or r.plan is None:
        text = "; ".join(f"{i.message}" + (f" ({i.fix})" if i.fix else "") for i in problems) or "cannot plan"
        return f"kvlint: {text}\n", 2
    arch, s, p, g = r.model, r.settings, r.plan, r.gpu
    rows = []
    for ctx in CONTEXTS:
        if ctx > arch.max_positions:
            break
        q = replan(arch, g, s, max_model_len=ctx)
        rows.append(
            {"context": ctx, "sequences_at_once": round(q.max_concurrency, 2), "fits": q.max_concurrency >= 1}
        )
    smallest = None
    for tp in (1, 2, 4, 8, 16):
        if not valid_tp(arch, tp):
            continue
        q = replan(arch, g, s, tp=tp)
        if q.weights_per_gpu <= q.weights_limit and q.max_concurrency >= (
            1 if not opts.get("sequences") else s.max_num_seqs
        ):
            smallest = {
                "gpus": tp * s.pp,
                "tensor_parallel": tp,
                "sequences_at_once": round(q.max_concurrency, 2),
            }
            break
    bar, shares = _bar(p)
    data = {
        "model": arch.id,
        "model_source": arch.source,
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
        "concurrency_by_context": rows,
        "smallest_fit": smallest,
        "memory_shares": {k: round(v, 4) for k, v in shares.items()},
        "defaults": {
            k: v.note
            for k, v in (
                ("max_context", d.max_context),
                ("max_sequences", d.max_sequences),
                ("gpu_memory_utilization", d.gpu_memory_utilization),
            )
            if v is not None and v.origin == "default"
        },
    }
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n", 0
    from kvlint.deployment import ENGINE_NAMES

    out = [
        f"{arch.id} on {s.tp * s.pp} x {g.name} ({gib(p.gpu_total)} as the engine sees it), {ENGINE_NAMES[s.engine]} "
        f"{s.version or ''}".rstrip(),
        "",
    ]
    if p.weights_per_gpu > p.weights_limit or p.kv_pool <= 0:
        out += [
            f"  does not fit: weights {gib(p.weights_per_gpu)} per GPU + runtime leave {gib(p.kv_pool)} for the KV cache "
            f"of the {gib(p.budget)} the engine may use ({p.weights_source})",
        ]
        if smallest:
            out.append(
                f"  smallest that fits: {smallest['gpus']} x {g.name} (tensor_parallel {smallest['tensor_parallel']}), "
                f"{smallest['sequences_at_once']:.2f} sequences of {s.max_model_len:,} tokens at once"
            )
        else:
            out.append(f"  does not fit on up to 16 x {g.name}")
        return "\n".join(out) + "\n", 0
    out += [
        f"  weights        {gib(p.weights_per_gpu)} per GPU  ({p.weights_source})",
        f"  KV per token   {human_bytes(p.kv_per_token)} per GPU  ({arch.attention_layers} layers, "
        + (
            "MLA latent"
            if arch.mla
            else f"{max(1, arch.kv_heads // s.tp)} KV heads/GPU x head_dim {arch.head_dim}"
        )
        + ")",
        f"  KV pool        {gib(p.kv_pool)} per GPU = {p.kv_tokens:,} tokens",
        f"  memory         [{bar}]",
        "                 "
        + "  ".join(f"{k} {v:.0%}" for k, v in shares.items())
        + "   (# weights  = KV  + runtime  . headroom)",
        "",
        "  context      sequences at once",
    ]
    for row in rows:
        out.append(
            f"  {row['context']:>9,}    {row['sequences_at_once']:>10,.2f}"
            + ("" if row["fits"] else "   (does not fit one)")
        )
    out += [
        "",
        f"  at max_context {s.max_model_len:,}: {p.max_concurrency:.2f} sequences at once; "
        f"{s.max_num_seqs:,} sequences get {p.context_at_max_seqs:,} tokens each",
    ]
    if smallest:
        out.append(
            f"  smallest that fits: {smallest['gpus']} x {g.name} (tensor_parallel {smallest['tensor_parallel']})"
        )
    else:
        out.append(f"  does not fit on up to 16 x {g.name}")
    for key, note in data["defaults"].items():
        out.append(f"  ({key}: {note})")
    return "\n".join(out) + "\n", 0
