"""The arithmetic lines of a vLLM plan, as the report prints them under a finding."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog.arch import ModelArch
from kvlint.engines.vllm.dsa import DsaCache
from kvlint.units import gib, tokens


def _per_token(p: Plan, arch: ModelArch, s: EngineSettings, kv_bytes: float, dsa: DsaCache | None) -> str:
    heads = 1 if arch.mla else max(1, arch.kv_heads // max(1, s.tp))
    per_layer = (1 if arch.mla else 2) * heads * arch.head_dim * kv_bytes
    if dsa is not None:
        latent = dsa.latent_bytes or per_layer
        layout = "fp8_ds_mla" if dsa.latent_bytes else f"{arch.head_dim} x {kv_bytes:g} B"
        index = p.kv_per_token - int(latent) * p.layers_per_block
        return (
            f"KV per token per GPU: MLA latent ({layout}) {latent:,.0f} B x {p.layers_per_block} layers + "
            f"DSA indexer keys {index:,} B ({dsa.indexer_bytes} B per indexer layer) = {p.kv_per_token:,} B "
            "(replicated on every TP rank)"
        )
    if arch.mla:
        formula = f"MLA latent {arch.head_dim} x {kv_bytes:g} B = {per_layer:,.0f} B per layer (replicated on every TP rank)"
    else:
        formula = f"2 x {heads} KV heads/GPU x head_dim {arch.head_dim} x {kv_bytes:g} B = {per_layer:,.0f} B per layer"
    return f"KV per token per GPU: {formula}; x {p.kv_per_token // max(1, int(per_layer))} layers = {p.kv_per_token:,} B"


def _logged_as(s: EngineSettings) -> str:
    from kvlint.engines.vllm.versions import logs_concurrency_tokens

    if logs_concurrency_tokens(s.generation, s.version):
        return "the requests of max_model_len the blocks hold, times max_model_len"
    return "the blocks per group times the block size"


def plan_lines(
    p: Plan, arch: ModelArch, s: EngineSettings, kv_bytes: float, dsa: DsaCache | None
) -> list[str]:
    stage = f" (pipeline stage {p.stage + 1} of {s.pp}, the tightest)" if s.pp > 1 else ""
    lines = [
        f"GPU memory the engine sees: {gib(p.gpu_total)} x gpu_memory_utilization {s.utilization:g}{s.utilization_default}"
        f" = {gib(p.budget)}",
    ]
    for t in p.terms:
        lines.append(f"  - {t.label}: {gib(t.bytes)}  ({t.note})")
    override = s.extra.get("num_gpu_blocks_override")
    left = p.budget - sum(t.bytes for t in p.terms)
    how = f" (--num-gpu-blocks-override {int(override):,}; the memory leaves {gib(left)})" if override else ""
    lines.append(f"  = KV-cache pool per GPU{stage}: {gib(p.kv_pool)}{how}")
    lines.append(_per_token(p, arch, s, kv_bytes, dsa))
    if dsa is not None:
        per_block = f"{s.block_size} tokens x {p.kv_per_token:,} B"
    elif p.kv_groups > 1:  # one block id holds a page per layer of a group; the groups share the ids
        per_block = (
            f"{s.block_size} tokens x {p.page_bytes // s.block_size:,} B x {p.group_slots} layer slots"
        )
    else:
        per_block = (
            f"{s.block_size} tokens x {p.page_bytes // s.block_size:,} B x {p.layers_per_block} layer slots"
        )
    counted = f"{p.num_blocks:,} blocks = {tokens(p.kv_tokens)} tokens"
    if p.kv_groups > 1 and dsa is None:  # the groups share the blocks: no one token count is the pool's
        counted = (
            f"{p.num_blocks:,} blocks shared by {p.kv_groups} KV-cache groups; vLLM logs "
            f"{tokens(p.kv_tokens)} tokens ({_logged_as(s)})"
        )
    lines.append(f"blocks: {gib(max(0, p.kv_pool))} / ({per_block}) = {counted}")
    lines.append(
        f"one request of {tokens(s.max_model_len)} tokens needs {gib(p.request_bytes)}; the pool holds "
        f"{p.max_concurrency:.2f} of them at once"
    )
    return lines
