from collections.abc import Iterator

from kvlint.capacity.declared import compare, facts_for
from kvlint.findings import Finding, Severity
from kvlint.rules.base import ModelContext, ModelRule
from kvlint.units import gib, human_bytes


class QueryHeadsAsKvHeads(ModelRule):
    """A declared KV figure uses query heads where the model has fewer KV heads (GQA/MQA).

    ## What it does
    Reports `architecture.kv_heads` equal to the model's query-head count when its config has
    fewer KV heads, and a `budget.kv_per_token`, `kv_per_sequence` or `kv_cache` that equals what
    query heads would give.

    ## Why is this bad?
    Grouped-query attention exists to shrink the KV cache: Llama-3.1-8B has 32 query heads but 8
    KV heads, so planning with 32 overstates KV per token four-fold and under-states concurrency
    four-fold: you rent four times the GPUs you need, or reject a deployment that fits.

    ## Formula
    `KV bytes per token = 2 × layers × kv_heads × head_dim × bytes` — `num_key_value_heads`, not
    `num_attention_heads`.

    ## Example
    `architecture: {kv_heads: 32}` for Llama-3.1-8B.

    Use instead: `kv_heads: 8` (`num_key_value_heads` in config.json).

    ## How to fix
    Take `num_key_value_heads` from the model's config.json and recompute.

    ## Suppress
    `# kvlint: disable=KV302 -- reason` on the line.
    """

    id = "KV302"
    name = "query-heads-as-kv-heads"
    severity = Severity.ERROR

    def check(self, ctx: ModelContext) -> Iterator[Finding]:
        d, arch = ctx.deployment, ctx.model
        declared = d.architecture.get("kv_heads")
        if (
            declared is not None
            and arch.kv_heads < arch.query_heads
            and int(declared.value) == arch.query_heads
        ):
            yield ctx.finding(
                self,
                declared.where,
                f"architecture.kv_heads {declared.value} is the query-head count; {arch.id} has {arch.kv_heads} KV heads "
                f"(grouped-query attention), so KV per token is {arch.query_heads // max(1, arch.kv_heads)}x smaller",
                details=[
                    f"from {arch.source}: num_attention_heads {arch.query_heads}, num_key_value_heads {arch.kv_heads}"
                ],
                fix=f"kv_heads: {arch.kv_heads}",
            )
        plan, gpu, s = ctx.plan, ctx.gpu, ctx.settings
        if not d.budget or plan is None or gpu is None or s is None:
            return
        budget = {k: v.value for k, v in d.budget.items()}
        facts = facts_for(arch, gpu, s, plan)
        for c in compare(budget, facts, ctx.thresholds.declared_tolerance):
            if c.verdict != "query-heads":
                continue
            v = d.budget[c.key]
            text = getattr(v.value, "text", str(v.value))
            correct = {
                "kv_per_token": facts.kv_per_token,
                "kv_per_sequence": facts.kv_per_token * facts.max_context,
                "kv_cache": facts.kv_per_token * facts.max_context * facts.max_sequences,
            }[c.key]
            right = human_bytes(correct) if c.key == "kv_per_token" else gib(correct)
            if arch.mla:
                what = f"multi-head attention with {arch.query_heads} heads gives; MLA stores one {arch.head_dim}-wide latent per layer: {right}"
            else:
                what = f"{arch.query_heads} query heads give; with {arch.kv_heads} KV heads it is {right}"
            yield ctx.finding(
                self,
                v.where,
                f"budget.{c.key} {text} is what {what}",
                details=[
                    f"with {arch.query_heads} query heads: {human_bytes(int(c.alt))} per token-equivalent figure",  # type: ignore[arg-type]
                    f"2 x {arch.attention_layers} layers x {arch.kv_heads} heads x {arch.head_dim} x bytes = {human_bytes(facts.kv_per_token)} per token (KV heads)",
                ],
                fix=f"use {arch.kv_heads} KV heads: {human_bytes(correct)}",
            )
