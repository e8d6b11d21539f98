from collections.abc import Iterator

from kvlint import engines
from kvlint.capacity.course import fits
from kvlint.capacity.plan import Plan
from kvlint.capacity.whatif import replan, smallest_tp
from kvlint.catalog.how import MATCHED_BY_NAME
from kvlint.engines.base import LongSequence, Startup
from kvlint.findings import Finding, Severity
from kvlint.record import replace
from kvlint.rules.base import PlanContext, PlanRule
from kvlint.rules.facts import knob, pool_tokens, shown, unit, where_of
from kvlint.rules.fixes import UNSAFE, display, other_run, set_setting
from kvlint.units import gib, tokens

# How far the plan may be off where kvlint had to assume, measured on the calibration logs
# (benchmarks/accuracy.py --cases, "all, no image tag"): replaying every vLLM log with the newest
# release's accounting puts the KV pool within 5.2 % on 19 of the 24 it can size; the other five moved
# by 0.9-4.5 GiB, logs of releases before a change to the memory accounting (the 0.92 default, CUDA
# graphs taken from the budget), so their error is the release's, not a margin around a verdict. A model
# matched by name has its weights priced from the name, 4 % low on the one calibration case it could be
# checked on (v-079, 11.63 vs 12.11 GiB).
ASSUMED_VERSION_POOL_ERROR = 0.052
NAME_MATCHED_WEIGHTS_ERROR = 0.04


def assumptions(ctx: PlanContext) -> tuple[list[str], int]:
    """What the verdict rests on that the file does not state, and how many bytes that may move the pool."""
    p = ctx.plan
    said: list[str] = []
    slack = 0
    if ctx.in_force.engine_version is None or ctx.in_force.engine_version.origin == "default":
        said.append(
            f"the newest {engines.display(ctx.settings.engine)} release's accounting (no image tag names the version)"
        )
        slack += int(max(p.kv_pool, 0) * ASSUMED_VERSION_POOL_ERROR)
    if ctx.model_how.startswith(MATCHED_BY_NAME):
        said.append("weights priced from the model's name, not its checkpoint")
        slack += int(p.weights_per_gpu * NAME_MATCHED_WEIGHTS_ERROR)
    return said, slack


def fits_one(p: Plan) -> bool:
    """One request of max_model_len fits the pool (the course's `fits`, in the engine's allocation units).
    A plan whose GPU holds no KV cache at all (llama.cpp with every layer on the CPU, or --no-kv-offload: the
    cache is in host memory, 0 B per token on the GPU) has nothing here to fit, unless its start-up
    allocation fails (warmup_fails says what then)."""
    if p.kv_per_token == 0 and not p.warmup_fails:
        return True
    return p.kv_pool > 0 and p.request_units > 0 and fits(p.pool_units, [p.request_units], 1)


class KvCacheBelowMaxContext(PlanRule):
    """One sequence of max_context does not fit the KV-cache pool: the engine refuses to start.

    ## What it does
    Sizes the KV-cache pool the engine will allocate on each GPU (memory it may use, minus
    weights, activation peak, non-torch memory and, from vLLM 0.21, CUDA graphs), and the KV cache
    one request of `max_context` (vLLM `max_model_len`) needs, in whole blocks, layer kind by
    layer kind (sliding-window layers hold only the window under vLLM's hybrid KV manager).

    ## Why is this bad?
    vLLM checks this at start-up and exits: "To serve at least one request with the model's max
    seq len (N), (X GiB KV cache is needed, which is larger than the available KV cache memory
    (Y GiB)". When the pool is empty it fails with "No available memory for the cache blocks".
    SGLang starts, but a request of context_length can never be scheduled. TGI sizes its pool
    after a warm-up that first allocates KV blocks for the warm-up batch (requests of up to
    `max_input_tokens` with room to `max_total_tokens`); when that batch and the warm-up prefill do
    not fit beside the weights, it stops with "Not enough memory to handle N prefill tokens", and
    when a stated `max_total_tokens` exceeds the pool its router refuses
    ("`max_total_tokens` must be <= `max_batch_total_tokens`" up to v2.0, "Not enough memory to
    handle `max_total_tokens=N`" from v2.1).
    LMDeploy starts and cuts the session length to what its KV blocks hold (TurboMind up to v0.14:
    "No enough blocks for `session_len` (S), `session_len` truncated to T."; the PyTorch engine
    likewise), so a longer request is refused; TurboMind from v0.15 keeps it and fails such a
    request ("cache out of memory").
    llama.cpp allocates fixed buffers (weights, a KV cache of `-c` cells, a compute buffer) and exits
    when one does not fit ("failed to allocate buffer for kv cache"); on several GPUs each holds its own
    layers with their KV cache, so one GPU short of memory fails the start-up whatever the others have
    free (an uneven `--tensor-split`, say). From the builds that fit by default, an unset `-c` is cut to
    what fits instead.

    ## Formula
    `KV per token per GPU = 2 × layers × max(1, kv_heads ÷ TP) × head_dim × bytes` (MLA: one
    latent of `kv_lora_rank + qk_rope_head_dim`, not divided by TP); a request needs
    `ceil(max_context ÷ block) × block × KV per token`; error when that exceeds the pool.

    ## Example
    Llama-3.1-8B on one L4 with `max_context: 131072` (16 GiB of KV for one sequence).

    Use instead: `max_context: 32768`, or `kv_cache_dtype: fp8`, or a second GPU.

    When the verdict rests on something the file does not state — no image tag names the engine
    version (kvlint applies the newest release's accounting), or the model was matched by name (its
    weights priced from the name) — and the request misses the pool by less than those assumptions
    may be off (5.2 % of the pool for an assumed vLLM version: the p90 of replaying the calibration
    logs without their tags; 4 % of the weights for a name-matched model: the one calibration case
    that checks it), the finding is a warning that names the assumptions, not an error.

    An engine that shrinks its length to what the pool holds instead of refusing (TensorRT-LLM, LMDeploy,
    llama.cpp's fit, NIM's TensorRT-LLM profiles) starts: the finding says at which length. It is an
    error when the file states the length (the deployment does not get what it asks for), a warning
    when the length is the engine's own default (requests beyond the shorter length are refused).

    ## How to fix
    Lower `max_context` to the figure the message gives (vLLM's own estimate of the largest that
    fits), store the KV cache in fp8, raise `gpu_memory_utilization` a little, or add GPUs.
    For llama.cpp, whose buffers either all fit or fail, the figure is the largest `-c` whose model,
    compute and KV buffers llama-server allocates, found on its own plan at each length (a sliding-window
    model's window-sized layers and the `-np` slots counted as llama.cpp allocates them).

    `--unsafe-fixes` applies the first of these: the context written in place (or added as
    `--max-model-len` after the last argument when the engine's default was in force). It comes
    first because it is the least disruptive: every request up to that length runs exactly as before,
    while fp8 changes the numerics of every request and more GPUs change the deployment's cost and
    shape (shown, never applied). All are unsafe: each changes what the deployment accepts.

    A NIM whose image's release publishes another profile for the pod's GPUs that holds one sequence of
    the context (fp8 weights, or a larger TP on GPUs the pod has) gets that profile as a further fix,
    `NIM_MODEL_PROFILE` with its id (shown, never applied: it changes the precision or the GPUs used).

    ## Suppress
    `# kvlint: disable=KV102 -- reason` on the max_context line, or `kvlint.io/ignore: "KV102=reason"`.
    """

    id = "KV102"
    name = "kv-cache-below-max-context"
    severity = Severity.ERROR
    fix_applicability = "unsafe"

    def check(self, ctx: PlanContext) -> Iterator[Finding]:
        p, d, s, arch = ctx.plan, ctx.deployment, ctx.settings, ctx.model
        if p.weights_per_gpu > p.weights_limit or fits_one(p):
            return  # KV101 reports the first case; the second is fine
        engine = engines.get(s.engine)
        # the knobs the engine as it runs reads (a NIM TensorRT-LLM profile: none for the KV dtype)
        ctx_key, kv_key, tp_key = (
            knob(d, k, s) for k in ("max_context", "kv_cache_dtype", "tensor_parallel")
        )
        where = where_of(d, ctx.in_force.max_context, d.model)
        fixes = []
        edits = []
        fits_len = engine.context_fix(arch, ctx.gpu, s, p) if ctx_key else None
        if ctx_key and fits_len:
            fixes.append(f"{ctx_key} {fits_len} (the largest that fits)")
            edits.append(
                set_setting(
                    d,
                    ctx.in_force.engine_name,
                    ctx.in_force.max_context,
                    "max_context",
                    fits_len,
                    f"set {ctx_key} {fits_len}",
                    UNSAFE,
                )
            )
        smaller = engine.smaller_kv(s.version) if kv_key else None
        if smaller and s.kv_cache_dtype in ("auto", "bfloat16", "float16") and arch.dtype != "float32":
            planned, written = smaller
            q = replan(arch, ctx.gpu, s, kv_cache_dtype=planned)
            if fits_one(q):
                fixes.append(f"{kv_key} {written} (halves KV per token)")
                edits.append(
                    set_setting(
                        d,
                        ctx.in_force.engine_name,
                        ctx.in_force.kv_cache_dtype,
                        "kv_cache_dtype",
                        written,
                        f"set {kv_key} {written}",
                        UNSAFE,
                    )
                )
        found = smallest_tp(arch, ctx.gpu, s, fits_one)
        if found and tp_key:
            fixes.append(f"{tp_key} {found[0]}")
            edits.append(display(f"{tp_key} {found[0]} on {found[0]} {unit(ctx.gpu)}s per replica"))
        other = other_run(d, arch, ctx.gpu, s, fits_one)
        if other:
            fixes.append(other[0])
            edits.append(other[1])
        message, shrinks_from_default = _message(ctx, engine)
        severity, message = _severity(ctx, message, shrinks_from_default)
        yield ctx.finding(
            self,
            where,
            message,
            severity=severity,
            details=p.lines,
            fix=("set " + "; or ".join(fixes)) if fixes else f"use more or larger {unit(ctx.gpu)}s",
            fixes=edits,
        )


def _message(ctx: PlanContext, engine) -> tuple[str, bool]:
    """What the pool cannot do and what the engine does then; whether it shrinks from a length it chose."""
    p, s = ctx.plan, ctx.settings
    if p.warmup_fails:
        return p.warmup_fails, False
    if p.kv_pool <= 0:
        return (
            f"no memory is left for the KV cache: {gib(p.budget)} usable - "
            + " - ".join(f"{t.label} {gib(t.bytes)}" for t in p.terms)
            + f" = {gib(p.kv_pool)}; {engine.display} fails at start-up"
            + (f' ("{engine.no_kv_memory_says}")' if engine.no_kv_memory_says else "")
        ), False
    answer = p.startup or engine.long_sequence(s.version, ctx.in_force.max_context)
    length = ctx.in_force.max_context
    # it starts, shorter, at a length it chose itself: an error only when the author asked for it
    from_default = answer.startup is Startup.SHRINKS and (length is None or length.origin != "stated")
    if answer.startup is Startup.SHRINKS and answer.shrinks_to is None:
        answer = replace(answer, shrinks_to=p.max_len_that_fits)  # the length only the plan knows
    return (
        f"one sequence of {shown(ctx.in_force.max_context)} tokens needs {gib(p.request_bytes)} of KV cache but the pool "
        f"holds {gib(p.kv_pool)} per {unit(ctx.gpu)} ({pool_tokens(p)}): {engine.display} {_verb(answer)}"
    ), from_default


def _severity(ctx: PlanContext, message: str, shrinks_from_default: bool) -> tuple[Severity | None, str]:
    """A warning, with why, where the engine starts anyway or the miss is within kvlint's assumptions."""
    p = ctx.plan
    said, slack = assumptions(ctx)
    if shrinks_from_default:
        return (
            Severity.WARNING,
            message + "; the length is the engine's default, not stated: a warning, not an error",
        )
    if p.kv_pool > 0 and said and p.request_bytes - p.kv_pool <= slack:
        return Severity.WARNING, message + (  # within what the assumptions may be off: not a certain refusal
            f"; short by {gib(p.request_bytes - p.kv_pool)}, within the {gib(slack)} kvlint's assumptions may be "
            f"off ({'; '.join(said)}): a warning, not an error"
        )
    return None, message


def _verb(answer: LongSequence) -> str:
    """What the engine does with the sequence, in the message's words."""
    if answer.startup is Startup.REFUSES:
        return f"refuses to start ({answer.says})" if answer.says else "refuses to start"
    if answer.startup is Startup.SHRINKS:
        said = f' ("{answer.says}")' if answer.says else ""
        return f"starts with a maximum length of {tokens(answer.shrinks_to or 0)}{said}"
    if answer.startup is Startup.QUEUES:
        return "admits such a request and it waits for a pool that never holds it"
    return "can never schedule such a request"
