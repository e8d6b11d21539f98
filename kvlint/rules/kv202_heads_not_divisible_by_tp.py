from collections.abc import Iterator

from kvlint import engines
from kvlint.capacity.whatif import valid_tp
from kvlint.engines.base import KvHeadSharding
from kvlint.findings import Finding, Severity
from kvlint.rules.base import SettingsContext, SettingsRule
from kvlint.rules.facts import spec_key, where_of


class HeadsNotDivisibleByTp(SettingsRule):
    """Attention heads, KV heads or experts do not divide evenly by the tensor-parallel size.

    ## What it does
    Checks what vLLM checks when it shards the model: the attention (query) heads must divide by
    TP; the KV heads must divide by TP when TP is smaller than their count, and TP must be a
    multiple of them when it is larger (`QKVParallelLinear`); with expert parallelism, the
    routed experts must divide by the expert-parallel size (TP x DP). TGI shards the KV heads
    and never replicates them: its shards need `kv_heads % num_shard == 0` at any size
    (huggingface/text-generation-inference flash_llama_modeling.py: "`num_key_value_heads` must be
    divisible by `num_shards`"; releases before v2.4 fail the same split in the weight-shape assert), and
    so did LMDeploy's TurboMind before v0.7.0 (`assert kv_head_num % tensor_para_size == 0`); from v0.7.0
    it repeats each KV head when TP is a multiple of their count, as vLLM does.

    ## Why is this bad?
    The engine refuses to start: "Total number of attention heads (40) must be divisible by
    tensor parallel size (3)."

    ## Formula
    `num_attention_heads % TP == 0`; `kv_heads % TP == 0` if `TP <= kv_heads`, else `TP % kv_heads == 0`;
    TGI, and LMDeploy before v0.7.0: `kv_heads % TP == 0`.

    ## Example
    Qwen2.5-7B (28 heads, 4 KV heads) with `tensor_parallel: 8`.

    Use instead: `tensor_parallel: 4` (or 2, 7, 14, 28 for the query heads; 1, 2, 4 for the KV heads).

    ## How to fix
    Pick a TP that divides the heads (the message lists the valid sizes up to 16).

    ## Suppress
    `# kvlint: disable=KV202 -- reason` on the TP line.
    """

    id = "KV202"
    name = "heads-not-divisible-by-tp"
    severity = Severity.ERROR

    def check(self, ctx: SettingsContext) -> Iterator[Finding]:
        arch, s, d = ctx.model, ctx.settings, ctx.deployment
        tp = s.tp
        if tp <= 1:
            return
        where = where_of(d, ctx.in_force.tensor_parallel)
        name = ctx.in_force.engine_name
        engine = engines.get(name) if engines.known(name) else None
        sharded = engine is not None and engine.kv_head_sharding(s.version) is KvHeadSharding.SHARDED
        valid = [t for t in range(1, 17) if valid_tp(arch, t, name, s.version)]
        fix = f"use a tensor-parallel size of {', '.join(map(str, valid))}"
        if arch.query_heads % tp:
            yield ctx.finding(
                self,
                where,
                f"Total number of attention heads ({arch.query_heads}) must be divisible by tensor parallel size ({tp}) "
                f"— {arch.id} cannot be sharded {tp} ways",
                fix=fix,
            )
        elif not arch.mla and sharded and engine is not None and arch.kv_heads % tp:
            says = f" ({engine.kv_split_says})" if engine.kv_split_says else ""
            yield ctx.finding(
                self,
                where,
                f"{arch.kv_heads} KV heads do not divide by {spec_key(d, 'tensor_parallel', name)} {tp}: "
                f"{engine.display} shards the KV heads without replicating them and refuses{says}",
                fix=fix,
            )
        elif not arch.mla and tp < arch.kv_heads and arch.kv_heads % tp:
            yield ctx.finding(
                self,
                where,
                f"{arch.kv_heads} KV heads do not divide by tensor parallel size {tp}: vLLM cannot shard the KV projection",
                fix=fix,
            )
        elif not arch.mla and tp > arch.kv_heads and tp % arch.kv_heads:
            yield ctx.finding(
                self,
                where,
                f"tensor parallel size {tp} is not a multiple of the {arch.kv_heads} KV heads: vLLM cannot replicate them evenly",
                fix=fix,
            )
        if arch.num_experts and d.expert_parallel is not None and d.expert_parallel.value:
            ep = tp * max(1, s.dp)
            if arch.num_experts % ep:
                yield ctx.finding(
                    self,
                    where,
                    f"{arch.num_experts} experts do not divide by the expert-parallel size {ep} (TP x DP)",
                    fix="choose TP x DP that divides the experts",
                )
