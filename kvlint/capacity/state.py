"""Hybrid models' fixed per-sequence state (Mamba, Gated DeltaNet, lightning attention) in the engines' pools.

A hybrid decoder's Mamba / linear-attention layers keep one fixed-size state per running request
instead of a KV cache that grows with the context (kvlint.catalog.hybrid prices it:
ModelArch.state_bytes_per_seq over ModelArch.state_layers). The engines carve that state out of the
memory they would otherwise give the attention KV cache; how each does: kvlint/engines/vllm/state.py (vLLM V1's hybrid KV cache manager, V0's
MambaCacheManager) and kvlint/engines/sglang/state.py (SGLang's mamba pool).
"""

from __future__ import annotations

from kvlint.capacity.kv import MAMBA, cdiv, pp_partitions
from kvlint.catalog.arch import NONE, ModelArch


def has_state(arch: ModelArch) -> bool:
    return bool(arch.state_layers and arch.state_bytes_per_seq)


def layer_state_bytes(arch: ModelArch, tp: int) -> int:
    """One stateful layer's state for one request on one GPU (the state's heads split over TP)."""
    if not has_state(arch):
        return 0
    return cdiv(arch.state_bytes_per_seq // len(arch.state_layers), max(1, tp))


def stage_kinds(arch: ModelArch, pp: int, state_kind: str = MAMBA) -> list[tuple[str, ...]]:
    """Per pipeline stage, the cache kind of every layer that holds one: attention kinds and `state_kind`."""
    stateful = set(arch.state_layers)
    out, start = [], 0
    for n in pp_partitions(arch.layers, pp):
        kinds = []
        for i in range(start, start + n):
            kind = arch.layer_kinds[i] if i < len(arch.layer_kinds) else NONE
            if kind != NONE:
                kinds.append(kind)
            if i in stateful:  # Falcon-H1 layers hold both
                kinds.append(state_kind)
        out.append(tuple(kinds))
        start += n
    return out


__all__ = ["MAMBA", "has_state", "layer_state_bytes", "stage_kinds"]
