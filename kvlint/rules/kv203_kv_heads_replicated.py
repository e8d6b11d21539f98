from collections.abc import Iterator

from kvlint import engines
from kvlint.engines.base import KvHeadSharding
from kvlint.findings import Finding, Severity
from kvlint.rules.base import SettingsContext, SettingsRule
from kvlint.rules.facts import unit, where_of
from kvlint.units import human_bytes


class KvHeadsReplicated(SettingsRule):
    """Tensor parallelism beyond the KV-head count replicates KV heads: KV per GPU stops shrinking.

    ## What it does
    Reports TP larger than the model's KV heads (grouped-query attention), and any TP > 1 with
    multi-head latent attention (MLA), whose single latent is replicated on every rank.

    ## Why is this bad?
    Each extra GPU adds compute but no KV-cache capacity per token: with 8 KV heads, TP 16 keeps
    two copies of every head. Planning that assumes KV per GPU halves with every doubling of TP
    overstates concurrency.

    ## Formula
    KV heads per GPU = `max(1, kv_heads // TP)` (vLLM `get_num_kv_heads`); MLA: always 1 latent.
    TGI does not replicate KV heads (it refuses, KV202), so this rule stays silent for TGI's GQA models.

    ## Example
    Qwen2.5-7B (4 KV heads) at `tensor_parallel: 8`.

    Use instead: TP 4 and two replicas (or data parallelism), which doubles the KV pool.

    ## How to fix
    Nothing breaks; consider data parallelism (replicas) instead of more TP for throughput, or
    DP attention for MLA models.

    ## Suppress
    `# kvlint: disable=KV203` on the TP line, or `ignore = ["KV203"]`.
    """

    id = "KV203"
    name = "kv-heads-replicated"
    severity = Severity.INFO
    infos = {
        None: "tensor-parallel workloads whose KV cache per {device} does not shrink with TP (an MLA latent or KV heads "
        "replicated on every rank) — for more KV capacity add replicas (data parallelism), not TP"
    }

    def check(self, ctx: SettingsContext) -> Iterator[Finding]:
        arch, s, d = ctx.model, ctx.settings, ctx.deployment
        if s.tp <= 1:
            return
        where = where_of(d, ctx.in_force.tensor_parallel)
        device = unit(ctx.gpu)
        if arch.mla:
            yield ctx.finding(
                self,
                where,
                f"{arch.id} uses MLA: its {arch.head_dim}-wide latent is replicated on all {s.tp} tensor-parallel ranks, "
                f"so the KV cache per token per {device} does not shrink with TP",
                fix="for more KV capacity use data parallelism (DP attention) rather than more TP",
            )
        elif (
            s.tp > arch.kv_heads
            and engines.get(ctx.in_force.engine_name).kv_head_sharding(s.version) is KvHeadSharding.REPLICATED
        ):
            copies = s.tp // arch.kv_heads
            per = 2 * arch.head_dim * 2 * arch.attention_layers
            yield ctx.finding(
                self,
                where,
                f"TP {s.tp} > {arch.kv_heads} KV heads: each KV head is replicated on {copies} {device}s; KV per {device} stays at "
                f"one head ({human_bytes(per)} per token in bf16) instead of shrinking",
                fix=f"TP {arch.kv_heads} with more replicas keeps the same {device}s and more KV cache",
            )
