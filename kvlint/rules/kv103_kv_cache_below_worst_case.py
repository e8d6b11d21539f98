from collections.abc import Iterator

from kvlint.capacity.course import fits, max_concurrent, usable_budget
from kvlint.findings import Finding, Severity
from kvlint.rules.base import PlanContext, PlanRule
from kvlint.rules.facts import shown, spec_key, where_of
from kvlint.rules.fixes import UNSAFE, set_setting
from kvlint.units import gib, tokens


class KvCacheBelowWorstCase(PlanRule):
    """max_sequences sequences of max_context tokens do not fit the KV-cache pool together.

    ## What it does
    Compares the KV cache that `max_sequences` (vLLM `max_num_seqs`, SGLang
    `max_running_requests`, TGI `max_concurrent_requests`) sequences of `max_context` tokens need
    with the pool the engine allocates, and gives the real concurrency at `max_context` and the
    longest context every one of `max_sequences` sequences can have. A `fragmentation` allowance
    and a headroom margin from the configuration can make the test stricter.

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

    Use instead: `max_sequences` equal to the concurrency the message reports, a shorter context,
    fp8 KV cache, or more GPUs.

    ## How to fix
    Set `max_sequences` (`--max-num-seqs`) to the concurrency kvlint reports, so the engine
    admits no more than it can hold, or make room (shorter context, fp8 KV, more GPUs).

    `--unsafe-fixes` lowers the concurrency limit to what runs at full length at once (in place, or
    as a new flag when the engine's default was in force): the least disruptive change, since every
    admitted request keeps its full context; it is unsafe because fewer requests run at once.

    ## Suppress
    `# kvlint: disable=KV103 -- reason` on the max_sequences line, or `kvlint.io/ignore: "KV103=reason"`.
    """

    id = "KV103"
    name = "kv-cache-below-worst-case"
    severity = Severity.WARNING
    fix_applicability = "unsafe"
    infos = {
        None: "workloads whose engine-default limits (not in the file) cannot all run at full length at once; "
        "the engine queues the rest — state the concurrency you plan for"
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
        seq_key = spec_key(d, "max_sequences", s.engine)
        where = where_of(d, ctx.in_force.max_sequences, ctx.in_force.max_context)
        allowance = f" after {frag:.0%} fragmentation" if frag else ""
        admit = max(1, max_concurrent(usable, p.request_units, 1)) if p.request_units else 1
        message = (
            f"{shown(ctx.in_force.max_sequences)} sequences of {shown(ctx.in_force.max_context)} tokens need {gib(need)} of KV cache per GPU "
            f"but the pool holds {gib(p.kv_pool)}: only {real:.2f} run at full length at once{allowance}; "
            f"{seqs:,} sequences get {tokens(p.context_at_max_seqs)} tokens each"
        )
        if not configured:
            # Both limits are the engine's own defaults: the engine queues what does not fit by design.
            # The worst case is worth knowing, not a warning about something the author wrote.
            yield ctx.finding(
                self,
                where,
                message + " (both limits are engine defaults; the engine queues the rest)",
                details=p.lines,
                fix=f"state the concurrency you plan for: {seq_key} {admit}",
                severity=Severity.INFO,
            )
            return
        yield ctx.finding(
            self,
            where,
            message,
            details=p.lines,
            fix=f"set {seq_key} {admit} to admit only what fits, or shorten the context, use fp8 KV cache, or add GPUs",
            fixes=[
                set_setting(
                    d,
                    ctx.in_force.engine_name,
                    ctx.in_force.max_sequences,
                    "max_sequences",
                    admit,
                    f"set {seq_key} {admit}",
                    UNSAFE,
                )
            ],
        )
