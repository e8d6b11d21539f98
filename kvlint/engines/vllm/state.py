"""vLLM's hybrid models: the fixed per-sequence state in its pools (kvlint/capacity/state.py says what it is).

vLLM V1 (hybrid KV cache manager), read in vllm-project/vllm:
- vllm/model_executor/models/config.py `HybridAttentionMambaModelConfig.verify_and_update_config`
  (@0144dd5b): the attention block size is raised to `16 * cdiv(mamba_page, 16 * attn_page_1_token)`
  tokens when the stated block size is smaller ("Setting attention block size to %d tokens to ensure
  that attention page size is >= mamba page size"), and the Mamba page is padded up to the attention
  page ("Padding mamba page size by %.2f%%"). One Mamba page is one layer's state on one GPU.
- vllm/v1/core/kv_cache_utils.py `_get_kv_cache_groups_uniform_page_size` (@001cabc1): the Mamba
  layers are grouped like any other layer kind (group size = the smallest kind's layer count, or the
  largest when under 1.5 x), all groups share one pool of `available // (page x group size)` blocks;
  `_report_kv_cache_config` logs `num_blocks // groups x block_size` tokens.
- vllm/v1/kv_cache_interface.py `MambaSpec.max_memory_usage_bytes` (@001cabc1): one page per request
  and state group with mamba_cache_mode "none" (two with "align", the prefix-caching mode), so every
  running request holds one block of each state group: concurrency is bounded by the state slots and
  the attention pool shrinks by what they take.
"""

from __future__ import annotations

from kvlint.capacity import kv
from kvlint.capacity.kv import MAMBA, MAMBA_ALIGN, MAMBA_ALL, bytes_per_token_layer, cdiv, pp_partitions
from kvlint.capacity.plan import EngineSettings, Term
from kvlint.capacity.state import has_state, layer_state_bytes, stage_kinds
from kvlint.catalog.arch import ModelArch
from kvlint.engines.vllm.versions import describe, lookup, parse_version
from kvlint.record import replace

VLLM_ALIGNMENT = 16  # HybridAttentionMambaModelConfig: attention block sizes in multiples of 16


def vllm_block_size(arch: ModelArch, tp: int, kv_bytes: float, block_size: int) -> tuple[int, str]:
    """The attention block size vLLM runs a hybrid Mamba model with, and how it came about."""
    state = layer_state_bytes(arch, tp)
    per_token = bytes_per_token_layer(arch, tp, kv_bytes)
    if not state or not per_token:
        return block_size, ""
    raised = VLLM_ALIGNMENT * cdiv(state, VLLM_ALIGNMENT * per_token)
    if block_size >= raised:
        return block_size, (
            f"hybrid: the stated block size {block_size} already holds one layer's state "
            f"({state:,} B per GPU) in one attention page"
        )
    return raised, (
        f"hybrid: vLLM raises the attention block size from {block_size} to {raised} tokens so that one "
        f"attention page ({raised} x {per_token:,} B) holds one layer's fixed state ({state:,} B per GPU; "
        f"the state page is padded to it); every running request takes one block of each state group"
    )


def vllm_layout(
    arch: ModelArch, s: EngineSettings, kv_bytes: float
) -> tuple[EngineSettings, list[tuple[str, ...]], bool, str]:
    """(settings with the block size vLLM runs, cache kinds per stage, hybrid manager on, note).

    A V1 model with state layers always runs the hybrid manager (it cannot fold Mamba specs into one
    attention type: kv_cache_utils.unify_hybrid_kv_cache_specs raises)."""
    hybrid = s.hybrid_kv_cache_manager and s.generation == "V1"
    if s.generation != "V1" or not has_state(arch):
        return s, kv.stage_kinds(arch, s.pp), hybrid, ""
    block, note = vllm_block_size(arch, s.tp, kv_bytes, s.block_size)
    kind, mode_note = _vllm_state_kind(s, attention_free=arch.attention_layers == 0)
    return replace(s, block_size=block), stage_kinds(arch, s.pp, kind), True, f"{note}; {mode_note}"


def _vllm_state_kind(s: EngineSettings, attention_free: bool = False) -> tuple[str, str]:
    """How many state blocks a running request holds: vLLM's mamba_cache_mode as stated, else "align" when
    prefix caching is on (stated, or vLLM's default from the release in vllm_versions.py; never by default
    for an attention-free model: ModelConfig.is_prefix_caching_supported), else "none"."""
    mode = str(s.extra.get("mamba_cache_mode") or "").lower()
    if mode in ("none", "align", "all"):
        why = f"mamba_cache_mode {mode} (stated)"
    elif s.extra.get("enable_prefix_caching") is not None:
        mode = "align" if s.extra["enable_prefix_caching"] else "none"
        why = f"mamba_cache_mode {mode} (prefix caching {'on' if mode == 'align' else 'off'}, stated)"
    elif attention_free:
        mode, why = (
            "none",
            "mamba_cache_mode none (vLLM default: no prefix caching for attention-free models)",
        )
    else:
        version = parse_version(s.version)
        mode = str(lookup("mamba_cache_mode", version).value)
        why = f"mamba_cache_mode {mode} (vLLM default: {describe('mamba_cache_mode', version)})"
    return {"none": MAMBA, "align": MAMBA_ALIGN, "all": MAMBA_ALL}[mode], why


def v0_state_terms(arch: ModelArch, s: EngineSettings) -> list[Term]:
    """vLLM V0 (vllm/model_executor/models/mamba_cache.py @078a836d, MambaCacheManager): conv and temporal
    states for (Mamba layers, max_num_seqs padded to a CUDA-graph batch size), allocated in the first forward
    pass, i.e. during the profile run, so they come out of the KV cache's memory. Attention layers' KV is
    paged as usual. The tightest stage holds the most Mamba layers."""
    if s.generation != "V0" or not has_state(arch):
        return []
    seqs = s.max_num_seqs
    if not s.enforce_eager:  # VllmConfig.pad_for_cudagraph: capture sizes 1, 2, 4, then multiples of 8
        seqs = seqs if seqs <= 2 else 4 if seqs <= 4 else cdiv(seqs, 8) * 8
    layers = max(pp_partitions(len(arch.state_layers), s.pp))
    total = layer_state_bytes(arch, s.tp) * layers * seqs
    note = (
        f"V0 MambaCacheManager: {layers} Mamba/linear layers x {seqs} sequence slots (max_num_seqs, padded)"
    )
    return [Term("Mamba/linear state", total, note)]
