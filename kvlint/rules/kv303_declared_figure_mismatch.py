from collections.abc import Iterator

from kvlint.capacity.declared import compare, facts_for
from kvlint.findings import Finding, Severity
from kvlint.rules.base import ModelContext, ModelRule
from kvlint.units import Size, gib, human_bytes

_ARCH = {
    "layers": "layers",
    "query_heads": "query_heads",
    "head_dim": "head_dim",
    "hidden_size": "hidden_size",
    "vocab_size": "vocab_size",
    "max_positions": "max_positions",
    "sliding_window": "sliding_window",
}


class DeclaredFigureMismatch(ModelRule):
    """A planning figure under `budget:` or `architecture:` is off from kvlint's by more than 5 %.

    ## What it does
    Compares every declared figure that is not a unit swap (KV301) or a query-head slip (KV302)
    with kvlint's: budget sizes, `max_concurrency`, and architecture facts against the model's
    config. The tolerance is `declared-tolerance` in the configuration (default 5 %).

    ## Why is this bad?
    A plan that disagrees with the engine's arithmetic rents the wrong number of GPUs or promises
    users the deployment cannot hold. Showing both figures and the formula makes the gap visible.

    ## Formula
    `|declared - computed| / computed > tolerance`; each message names kvlint's formula.

    ## Example
    `budget: {max_concurrency: 64}` where the pool holds 12 sequences of max_context.

    Use instead: the figure kvlint computes, or fix the input the difference comes from.

    ## How to fix
    Update the plan with kvlint's figure, or correct the input behind the difference.

    ## Suppress
    `# kvlint: disable=KV303 -- reason` on the line.
    """

    id = "KV303"
    name = "declared-figure-mismatch"
    severity = Severity.WARNING

    def check(self, ctx: ModelContext) -> Iterator[Finding]:
        d, arch = ctx.deployment, ctx.model
        for key, attr in _ARCH.items():
            v = d.architecture.get(key)
            if v is None or arch.family == "declared":
                continue
            actual = getattr(arch, attr)
            if actual and abs(float(v.value) - actual) / actual > ctx.thresholds.declared_tolerance:
                yield ctx.finding(
                    self,
                    v.where,
                    f"architecture.{key} {v.value:,} but {arch.id}'s config says {actual:,}",
                    details=[f"from {arch.source}"],
                    fix=f"{key}: {actual}",
                )
        params = d.architecture.get("params")
        if params is not None and arch.family != "declared":
            if abs(params.value - arch.params) / arch.params > ctx.thresholds.declared_tolerance:
                yield ctx.finding(
                    self,
                    params.where,
                    f"architecture.params {params.value / 1e9:.2f}B but {arch.id} has {arch.params / 1e9:.2f}B",
                    details=[f"counted from {arch.source}"],
                    fix=f"params: {arch.params / 1e9:.2f}B",
                )
        plan, gpu, s = ctx.plan, ctx.gpu, ctx.settings
        if not d.budget or plan is None or gpu is None or s is None:
            return
        budget = {k: v.value for k, v in d.budget.items()}
        for c in compare(budget, facts_for(arch, gpu, s, plan), ctx.thresholds.declared_tolerance):
            if c.verdict != "mismatch":
                continue
            v = d.budget[c.key]
            if isinstance(v.value, Size):
                shown_declared, shown_computed = gib(c.declared), gib(c.computed)
                if c.key == "kv_per_token":
                    shown_declared, shown_computed = (
                        human_bytes(int(c.declared)),
                        human_bytes(int(c.computed)),
                    )
            else:
                shown_declared, shown_computed = f"{c.declared:,.2f}", f"{c.computed:,.2f}"
            off = (c.declared - c.computed) / c.computed if c.computed else 0.0
            yield ctx.finding(
                self,
                v.where,
                f"budget.{c.key} {shown_declared} differs from kvlint's {shown_computed} ({off:+.0%}): {c.explain}",
                details=plan.lines,
                fix=f"plan with {shown_computed}",
            )
