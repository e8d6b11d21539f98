from collections.abc import Iterator

from kvlint.capacity.declared import compare, facts_for
from kvlint.findings import Finding, Severity
from kvlint.rules.base import PlanContext, PlanRule
from kvlint.units import GB, gib


class GibGbMixup(PlanRule):
    """A declared size whose unit contradicts the facts: GB (10^9) and GiB (2^30) swapped.

    ## What it does
    Reads the sizes under `budget:` and compares each with kvlint's own figure. It reports a
    figure that matches only after swapping decimal and binary units (80 GB read as 80 GiB: a
    factor of 1.0737; 1.0486 for MB/MiB, 1.024 for KB/KiB), a Kubernetes-style `G` where `Gi` was
    meant, and a `gpu_memory` that is the card's marketed number (`80GiB` for an H100, which the
    engine sees as 79.18 GiB; `80GB` is only 74.51 GiB).

    ## Why is this bad?
    Hugging Face lists sizes in GB, vLLM logs GiB, SGLang prints "GB" but means GiB. A 7 % error
    on an 80 GB card is 5.6 GB: more than the whole KV cache of a tight deployment.

    ## Formula
    `1 GB = 10^9 B`, `1 GiB = 2^30 B = 1.0737 GB`; flagged when `declared` is off by more than 2 %
    but `number × other unit` is within 2 % of kvlint's figure.

    ## Example
    `budget: {weights: 16GiB}` for Llama-3.1-8B (16.06 GB = 14.96 GiB of weights).

    Use instead: `weights: 16.06GB` or `weights: 14.96GiB`.

    ## How to fix
    Write the figure in the unit it was computed in; the message gives both.

    ## Suppress
    `# kvlint: disable=KV301 -- reason` on the budget line.
    """

    id = "KV301"
    name = "gib-gb-mixup"
    severity = Severity.WARNING

    def check(self, ctx: PlanContext) -> Iterator[Finding]:
        d = ctx.deployment
        if not d.budget:
            return
        budget = {k: v.value for k, v in d.budget.items()}
        for c in compare(
            budget, facts_for(ctx.model, ctx.gpu, ctx.settings, ctx.plan), ctx.thresholds.declared_tolerance
        ):
            v = d.budget[c.key]
            text = getattr(v.value, "text", str(v.value))
            if c.verdict == "unit":
                yield ctx.finding(
                    self,
                    v.where,
                    f"budget.{c.key} {text} is {gib(c.declared)} ({c.declared / GB:,.2f} GB), but {c.explain} is "
                    f"{gib(c.computed)} ({c.computed / GB:,.2f} GB): the number matches only with its unit swapped",
                    details=[f"{text} read in the other unit system = {c.alt / GB:,.2f} GB = {gib(c.alt)}"],  # type: ignore[arg-type, operator]
                    fix=f"write {c.computed / GB:,.2f}GB or {c.computed / (1 << 30):,.2f}GiB",
                )
            elif c.verdict == "marketed":
                yield ctx.finding(
                    self,
                    v.where,
                    f"budget.gpu_memory {text} is the card's marketed size, not what the engine sees: "
                    f"{text} = {gib(c.declared)}, but {ctx.gpu.name} gives the engine {gib(c.computed)}",
                    details=[
                        f"marketed {ctx.gpu.marketed}; engine-visible total from {ctx.gpu.id} "
                        "(torch total_memory, lowest seen across drivers)"
                    ],
                    fix=f"plan with {c.computed / (1 << 30):,.2f}GiB",
                )
