from collections.abc import Iterator

from kvlint import engines
from kvlint.capacity.course import fits, max_concurrent, usable_budget
from kvlint.findings import Finding, Severity
from kvlint.record import record
from kvlint.rules.base import PlanContext, PlanRule
from kvlint.rules.facts import knob, pool_tokens, shown, state_cap_note, unit, where_of
from kvlint.units import gib, tokens


class KvCacheBelowWorstCase(PlanRule):
    """max_sequences sequences of max_context tokens do not fit the KV-cache pool together.

    ## What it does
    Compares the KV cache that `max_sequences` (vLLM `max_num_seqs`, SGLang
    `max_running_requests`, TGI `max_concurrent_requests`) sequences of `max_context` tokens need
    with the pool the engine allocates, and gives the real concurrency at `max_context` and the
    longest context every one of `max_sequences` sequences can have. A `fragmentation` allowance
    and a headroom margin from the configuration can make the test stricter.

    The worst case is the point, but few services fill every sequence to full length, so the
    message also gives how many requests of a typical length fit at once: `expected-tokens`
    (prompt + output) from the configuration, default 5,000 — the request NVIDIA's sizing tool
    assumes when none is given, 4,000 input + 1,000 output tokens (ai-dynamo/aiconfigurator
    `src/aiconfigurator/cli/main.py:407-408`, `--isl`/`--osl`). It is counted as the engine
    allocates a request of that length (vLLM blocks and sliding windows, SGLang and TGI token
    slots), in the same pool. A context no longer than `expected-tokens` is its own typical request.

    For a hybrid model whose Mamba / linear-attention state SGLang keeps in slots of its own, the pool is
    the full-attention layers' tokens (what one request may use) and the running requests are at most what
    the slots allow (a third of them with the radix cache on): when that cap, not the stated
    `max_sequences`, is what runs, the message says so and counts the cap.

    It warns when the author stated `max_sequences` or `max_context` (the other may be the engine
    default, named in the message). When both are engine defaults the same figures are an info: the
    engine queues by design, and nothing the author wrote is wrong.

    ## Why is this bad?
    The engine starts, but under load it cannot hold the sequences it admits: requests queue, or
    running sequences are preempted and recomputed, and latency collapses exactly at peak.
    Capacity planned from `max_sequences` overstates how many users the deployment holds.

    ## Formula
    `concurrency = pool ÷ (blocks per request × block bytes)`; warning when
    `concurrency × (1 - fragmentation) < max_sequences × (1 + margin)`.

    ## Example
    `max_sequences: 64` with `max_context: 32768` for Llama-3.1-8B on one L4.

    Use instead: `max_sequences` at the concurrency of typical requests, a shorter context, fp8 KV
    cache, or more GPUs.

    ## How to fix
    It is a trade-off, and the fix states both ends: `max_sequences` (`--max-num-seqs`) at what
    runs at full length guarantees every admitted request its context but serves only that many at
    once; at what fits at the typical length it keeps throughput, and the engine queues or preempts
    when long requests coincide. Or make room (shorter context, fp8 KV, more GPUs).

    The fix is shown, never applied (`--unsafe-fixes` leaves it alone): which end to take depends on
    the traffic, which the file does not say.

    ## Suppress
    `# kvlint: disable=KV103 -- reason` on the max_sequences line, or `kvlint.io/ignore: "KV103=reason"`.
    """

    id = "KV103"
    name = "kv-cache-below-worst-case"
    severity = Severity.WARNING
    fix_applicability = "display-only"  # a trade-off the user chooses: no edit is applied
    infos = {
        None: "workloads whose engine-default limits (not in the file) cannot all run at full length at once; "
        "the engine queues the rest — state the concurrency you plan for (each names what fits at a typical "
        "request length and at full length)"
    }

    def check(self, ctx: PlanContext) -> Iterator[Finding]:
        p, d, s = ctx.plan, ctx.deployment, ctx.settings
        if p.kv_pool <= 0 or p.max_concurrency < 1 or p.weights_per_gpu > p.weights_limit:
            return  # KV101/KV102 report these
        seqs = p.max_num_seqs
        if seqs <= 0:
            return
        configured = [
            v
            for v in (ctx.in_force.max_sequences, ctx.in_force.max_context)
            if v is not None and v.origin != "default"
        ]
        frag = ctx.thresholds.fragmentation
        if d.fragmentation is not None:
            frag = float(d.fragmentation.value)
        margin = ctx.thresholds.kv103_margin
        real = p.max_concurrency * (1 - frag)  # for the message; the decisions below are the course API's
        usable = usable_budget(p.pool_units, frag)  # in the engine's allocation units (blocks or tokens)
        # max_num_seqs requests of max_model_len, as one summed length: a list of max_num_seqs items costs seconds
        # for a large --max-concurrent-requests (123,433,837 in the property test: 3.4 s CPU)
        total = p.request_units * seqs
        if fits(usable, [total], 1) and (not margin or usable >= total * (1 + margin)):
            return
        need = seqs * p.request_bytes
        seq_key = knob(d, "max_sequences", s)
        where = where_of(d, ctx.in_force.max_sequences, ctx.in_force.max_context)
        allowance = f" after {frag:.0%} fragmentation" if frag else ""
        admit = max(1, max_concurrent(usable, p.request_units, 1)) if p.request_units else 1
        typical = _typical(ctx, usable, admit)
        lead = f"{shown(ctx.in_force.max_sequences)} sequences"
        capped = state_cap_note(p, _stated(ctx))
        if capped:  # the engine's state slots cap the running requests: the worst case is that many
            lead = f"{lead} stated, but {capped}: {seqs:,} sequences"
        message = (
            f"{lead} of {shown(ctx.in_force.max_context)} tokens need {gib(need)} of KV cache per {unit(ctx.gpu)} "
            f"but the pool holds {gib(p.kv_pool)}"
            + (f" ({pool_tokens(p)})" if p.state_layers else "")
            + f": only {real:.2f} run at full length at once{allowance}"
            + f"; {seqs:,} sequences get {tokens(p.context_at_max_seqs)} tokens each"
        )
        if typical.tokens < p.max_model_len:
            message += f"; at a typical request of {tokens(typical.tokens)} tokens (expected-tokens) " + (
                f"all {seqs:,} fit" if typical.fit >= seqs else f"{typical.fit:,} fit"
            )
        if not configured:
            # Both limits are the engine's own defaults: the engine queues what does not fit by design.
            # The worst case is worth knowing, not a warning about something the author wrote.
            yield ctx.finding(
                self,
                where,
                message + " (both limits are engine defaults; the engine queues the rest)",
                details=p.lines,
                fix=f"state the concurrency you plan for: {_trade_off(seq_key, seqs, admit, typical)}"
                if seq_key
                else _no_knob(ctx),
                severity=Severity.INFO,
            )
            return
        yield ctx.finding(
            self,
            where,
            message,
            details=p.lines,
            fix=f"{'a trade-off: ' if typical.tokens < p.max_model_len else ''}"
            f"{_trade_off(seq_key, seqs, admit, typical)}; or make room: {_room(ctx)}"
            if seq_key
            else _no_knob(ctx),
        )


def _room(ctx: PlanContext) -> str:
    """How to make room, by what the engine as it runs reads (no fp8 KV cache where no knob sets it)."""
    fp8 = ["use fp8 KV cache"] if knob(ctx.deployment, "kv_cache_dtype", ctx.settings) else []
    ways = ["shorten the context", *fp8, f"add {unit(ctx.gpu)}s"]
    return f"{ways[0]} or {ways[1]}" if len(ways) == 2 else f"{', '.join(ways[:-1])}, or {ways[-1]}"


def _no_knob(ctx: PlanContext) -> str:
    """The fix where no setting the engine reads as it runs limits the sequences (a NIM TensorRT-LLM profile)."""
    shorten = knob(ctx.deployment, "max_context", ctx.settings)
    room = _room(ctx).replace("the context", f"the context ({shorten})" if shorten else "the context", 1)
    return f"{engines.display(ctx.settings.engine)} as it runs here reads no setting that limits the sequences; to make room: {room}"


def _stated(ctx: PlanContext) -> int:
    v = ctx.in_force.max_sequences
    return int(v.value) if v is not None and isinstance(v.value, int) else 0


@record(frozen=True)
class Typical:
    tokens: int  # a typical request's length: expected-tokens, at most the context
    fit: int  # requests of that length the pool holds at once


def _typical(ctx: PlanContext, usable: int, admit: int) -> Typical:
    """How many requests of the expected length (capped at the context) the usable pool holds, counted as the
    engine allocates them (its blocks, sliding windows, token slots: Engine.request_units)."""
    p = ctx.plan
    n = min(ctx.thresholds.expected_tokens, p.max_model_len)
    if n >= p.max_model_len:
        return Typical(p.max_model_len, admit)
    units = engines.get(ctx.settings.engine).request_units(ctx.model, ctx.gpu, ctx.settings, n)
    return Typical(n, max(1, max_concurrent(usable, units, 1)) if units > 0 else admit)


def _trade_off(seq_key: str, seqs: int, admit: int, typical: Typical) -> str:
    """Both ends of the choice, never the full-length cut alone: a service of short requests keeps its
    concurrency; one of long requests caps it."""
    full = f"{seq_key} {admit} holds every admitted request at full length, but only {admit:,} at once"
    if typical.fit >= seqs:
        return (
            f"{seqs:,} run at once while requests stay near {tokens(typical.tokens)} tokens, and the engine queues "
            f"or preempts when long ones coincide; {full}"
        )
    if typical.fit > admit:
        return (
            f"{seq_key} {typical.fit} holds that many requests of {tokens(typical.tokens)} tokens, and the engine "
            f"queues or preempts when long ones coincide; {full}"
        )
    return f"{seq_key} {admit} admits only what fits (the context is no longer than expected-tokens, a typical request)"
