from collections.abc import Iterator

from kvlint import engines
from kvlint.engines.base import BatchCheck
from kvlint.findings import Finding, Severity
from kvlint.rules.base import DeploymentContext, DeploymentRule
from kvlint.rules.facts import where_of
from kvlint.rules.fixes import SAFE, UNSAFE, replace_text


class BatchLimitsInconsistent(DeploymentRule):
    """Batching limits that contradict each other: the engine refuses them at start-up.

    ## What it does
    vLLM: `max_num_batched_tokens` below `max_num_seqs`, and below `max_model_len` when chunked
    prefill is off (`SchedulerConfig._verify_args`). TGI (launcher/src/main.rs, "Validate args"):
    `max_input_tokens` not below `max_total_tokens`, and `max_total_tokens` above a stated
    `max_batch_total_tokens`; up to v2.3 also `max_batch_prefill_tokens` below `max_input_tokens`
    or above a stated `max_batch_total_tokens` (both checks left the launcher in v2.4, with
    chunked prefill; an image without a version tag is judged by the newest release). Before v3
    the launcher defaults an unset `max_input_tokens` on its own (v1: 1024; v2.0-v2.4.0:
    max_position_embeddings capped at 4096, minus 1) and validates it the same way, so a stated
    `--max-total-tokens 2048` alone fails on TGI 2.0-2.4.0 (from v2.4.1, PR #2673, the server's
    warm-up sets it to max_total_tokens - 1). From v2.4 the router refuses `max_input_tokens` above
    `max_batch_prefill_tokens` when the server does not chunk prefills (PREFILL_CHUNKING off, the v2.4
    default; paged attention, as on the ROCm image; VLMs by release), with the values in force.

    ## Why is this bad?
    vLLM: "max_num_batched_tokens (b) must be greater than or equal to max_num_seqs (s)"; without
    chunked prefill no prompt longer than max_num_batched_tokens can ever run. TGI exits with
    "`max_input_tokens` must be < `max_total_tokens`".

    ## Formula
    `max_num_seqs <= max_num_batched_tokens`; `max_model_len <= max_num_batched_tokens` unless chunked prefill.

    ## Example
    `--max-num-batched-tokens=4096 --max-num-seqs=8192`.

    Use instead: `--max-num-batched-tokens` at least `--max-num-seqs`.

    ## How to fix
    Raise `max_num_batched_tokens`, lower `max_num_seqs`, or turn chunked prefill back on.

    vLLM refuses `max_num_batched_tokens` below `max_num_seqs`; `--fix` raises it to `max_num_seqs`
    (safe: the smallest value that starts, and no limit the author set is lowered). Raising it to
    the context with chunked prefill off, and TGI's limits, change what runs: unsafe.

    ## Suppress
    `# kvlint: disable=KV205 -- reason` on the line.
    """

    id = "KV205"
    name = "batch-limits-inconsistent"
    severity = Severity.ERROR
    fix_applicability = "safe (vLLM batched tokens below sequences); unsafe (the others)"

    def check(self, ctx: DeploymentContext) -> Iterator[Finding]:
        d = ctx.deployment
        checks = (
            engines.get(ctx.in_force.engine_name).batch_checks
            if engines.known(ctx.in_force.engine_name)
            else frozenset()
        )
        if BatchCheck.SCHEDULER_TOKENS in checks:
            yield from self._vllm(ctx, d)
        if BatchCheck.ROUTER_LIMITS in checks:
            yield from self._tgi(ctx, d)

    def _vllm(self, ctx, d):
        b, s, m = ctx.in_force.max_batched_tokens, ctx.in_force.max_sequences, ctx.in_force.max_context
        if b is None or b.origin == "default":
            return
        if s is not None and s.origin != "default" and int(b.value) < int(s.value):
            yield ctx.finding(
                self,
                where_of(d, b, s),
                f"max_num_batched_tokens ({int(b.value):,}) must be greater than or equal to max_num_seqs ({int(s.value):,})",
                fix=f"--max-num-batched-tokens {int(s.value)}",
                fixes=[
                    replace_text(
                        b, str(int(s.value)), f"raise --max-num-batched-tokens to {int(s.value)}", SAFE
                    )
                ],
            )
        chunked_off = d.chunked_prefill is not None and d.chunked_prefill.value is False
        if chunked_off and m is not None and int(b.value) < int(m.value):
            yield ctx.finding(
                self,
                where_of(d, b, m),
                f"max_num_batched_tokens ({int(b.value):,}) is smaller than max_model_len ({int(m.value):,}) with chunked "
                "prefill off: no prompt longer than max_num_batched_tokens can run",
                fix=f"--max-num-batched-tokens {int(m.value)}, or enable chunked prefill",
                fixes=[
                    replace_text(
                        b, str(int(m.value)), f"raise --max-num-batched-tokens to {int(m.value)}", UNSAFE
                    )
                ],
            )

    def _unchunked(self, ctx, d, prefill, inp, total):
        """v2.4+ router (backends/v3/src/main.rs, "Validate remaining args now that the backend is
        known"): `max_input_tokens > max_batch_prefill_tokens && !support_chunking` is refused; the
        values are the ones in force (stated, or the release's defaults), chunking as the server decides
        it (engines/tgi/defaults.py prefill_chunking)."""
        chunking = ctx.in_force.prefill_chunking
        eff_inp, eff_prefill = (
            ctx.in_force.options.get("max_input_tokens"),
            ctx.in_force.options.get("max_batch_prefill_tokens"),
        )
        if chunking is None or chunking.value is not False or eff_inp is None or eff_prefill is None:
            return
        if int(eff_inp.value) <= int(eff_prefill.value) or (
            inp is None and prefill is None and total is None
        ):
            return
        said = [v for v in (prefill, inp, total) if v is not None]
        yield ctx.finding(
            self,
            where_of(d, *said),
            f"`max_batch_prefill_tokens` must be >= `max_input_tokens`. Given: {int(eff_prefill.value):,} "
            f"({eff_prefill.describe()}) and {int(eff_inp.value):,} ({eff_inp.describe()}): TGI's router checks "
            f"this when prefills are not chunked ({chunking.note}) and refuses to start",
            fix=f"max_batch_prefill_tokens {int(eff_inp.value)} or more, or a smaller max_input_tokens",
        )

    def _tgi(self, ctx, d):
        """TGI's launcher and router limits, with the values the file states (a default is not the author's)."""
        total = (
            ctx.in_force.max_context
            if ctx.in_force.max_context is not None and ctx.in_force.max_context.origin != "default"
            else None
        )
        inp = _stated(ctx.in_force.options.get("max_input_tokens"))
        prefill = _stated(ctx.in_force.options.get("max_batch_prefill_tokens"))
        if inp is not None and total is not None and int(inp.value) >= int(total.value):
            yield ctx.finding(
                self,
                where_of(d, inp, total),
                f"`max_input_tokens` must be < `max_total_tokens` (given {int(inp.value):,} and {int(total.value):,})",
                fix=f"max_input_tokens {int(total.value) - 1} or a larger max_total_tokens",
                fixes=[
                    replace_text(
                        inp,
                        str(int(total.value) - 1),
                        f"lower max_input_tokens to {int(total.value) - 1}",
                        UNSAFE,
                    )
                ],
            )
        release = engines.get(ctx.in_force.engine_name).release
        version = (
            release(str(ctx.in_force.engine_version.value))
            if ctx.in_force.engine_version is not None
            else None
        )
        if inp is None and total is not None and version is not None and version < (3, 0):
            yield from self._default_input(ctx, d, total)
        yield from self._unchunked(ctx, d, prefill, inp, total)
        before_v24 = version is not None and version < (2, 4)
        if before_v24 and prefill is not None and inp is not None and int(prefill.value) < int(inp.value):
            yield ctx.finding(
                self,
                where_of(d, prefill, inp),
                f"`max_batch_prefill_tokens` must be >= `max_input_tokens` (given {int(prefill.value):,} and "
                f"{int(inp.value):,}; TGI {ctx.in_force.engine_version.value} checks this, v2.4 and later chunk the prefill)",
                fix=f"raise max_batch_prefill_tokens to {int(inp.value)} or lower max_input_tokens",
                fixes=[
                    replace_text(
                        prefill,
                        str(int(inp.value)),
                        f"raise max_batch_prefill_tokens to {int(inp.value)}",
                        UNSAFE,
                    )
                ],
            )
        limits = (("max_batch_prefill_tokens", prefill), ("max_total_tokens", total))
        yield from self._batch_total(ctx, d, limits if before_v24 else limits[1:])

    def _default_input(self, ctx, d, total):
        """v1 and v2.0-v2.4.0 launchers default max_input_tokens on their own (1024; max_position_embeddings
        capped at 4096, minus 1) and validate it against the stated max_total_tokens (tgi/defaults.py)."""
        default_inp = ctx.in_force.options.get("max_input_tokens")
        if default_inp is None or int(default_inp.value) < int(total.value):
            return
        yield ctx.finding(
            self,
            where_of(d, total),
            f"`max_input_tokens` must be < `max_total_tokens`: TGI {ctx.in_force.engine_version.value}'s default "
            f"max_input_tokens is {int(default_inp.value):,} ({default_inp.describe()}), not below the stated "
            f"{int(total.value):,}; the launcher refuses to start",
            fix=f"state max_input_tokens {int(total.value) - 1} (or less) beside max_total_tokens",
        )

    def _batch_total(self, ctx, d, limits):
        """Each stated limit must fit the batch total the router works with."""
        batch_total = ctx.in_force.options.get("max_batch_total_tokens")
        if batch_total is None:
            return
        for name, v in limits:
            if v is not None and int(v.value) > int(batch_total.value):
                yield ctx.finding(
                    self,
                    where_of(d, v, batch_total),
                    f"`{name}` must be <= `max_batch_total_tokens` (given {int(v.value):,} and {int(batch_total.value):,})",
                    fix=f"raise max_batch_total_tokens to {int(v.value)} or lower {name}",
                    fixes=[
                        replace_text(
                            batch_total,
                            str(int(v.value)),
                            f"raise max_batch_total_tokens to {int(v.value)}",
                            UNSAFE,
                        )
                    ],
                )


def _stated(v):
    """The value when the file states it (not the engine's default)."""
    return v if v is not None and v.origin != "default" else None
