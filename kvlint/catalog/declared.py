"""A ModelArch from the facts a spec declares under `architecture:` (for models not in the catalog)."""

from __future__ import annotations

from typing import Any

from kvlint.bounds import TOKENS_MAX
from kvlint.catalog.arch import FULL, SLIDING, LayerParams, ModelArch
from kvlint.deployment import Value


def arch_from_declared(facts: dict[str, Value[Any]], model_id: str) -> tuple[ModelArch | None, str]:
    """Build an architecture from declared facts; (None, what is missing) when too little is stated."""
    f = {k: v.value for k, v in facts.items()}
    missing = [k for k in ("layers", "kv_heads", "params") if k not in f]
    if "head_dim" not in f and not ("hidden_size" in f and "query_heads" in f):
        missing.append("head_dim (or hidden_size and query_heads)")
    if missing:
        return None, "missing " + ", ".join(missing)
    layers = int(f["layers"])
    query = int(f.get("query_heads") or f["kv_heads"])
    hidden = int(f.get("hidden_size") or query * int(f["head_dim"]))
    head_dim = int(f.get("head_dim") or hidden // query)
    vocab = int(f.get("vocab_size") or 32000)
    embed = vocab * hidden
    body = max(0, int(f["params"]) - embed)
    per_layer = body // layers
    window = f.get("sliding_window")
    kinds = (SLIDING if window else FULL,) * layers
    arch = ModelArch(
        id=model_id,
        source="declared under architecture: in the spec",
        family="declared",
        layers=layers,
        hidden_size=hidden,
        query_heads=query,
        kv_heads=int(f["kv_heads"]),
        head_dim=head_dim,
        vocab_size=vocab,
        max_positions=int(f.get("max_positions") or 0)
        or TOKENS_MAX,  # not declared: no limit inside the bounds
        max_positions_note="architecture.max_positions" if f.get("max_positions") else "not declared",
        layer_kinds=kinds,
        sliding_window=int(window) if window else None,
        intermediate_size=int(f.get("intermediate_size") or 4 * hidden),
        dtype=str(f.get("dtype") or "bfloat16"),
        embed_params=embed,
        lm_head_params=0,
        layer_params=tuple(LayerParams(per_layer, 0, 0, 0) for _ in range(layers)),
        notes=("architecture declared in the spec; weights spread evenly over the layers",),
    )
    return arch, ""
