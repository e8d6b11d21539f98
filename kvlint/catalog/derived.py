"""An uncatalogued id resolved to a catalogued base by the name rules (kvlint/catalog/name_rules.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvlint.catalog import how
from kvlint.catalog.arch import ENCODER_ONLY, ModelArch, Quant
from kvlint.catalog.name_rules import Derived
from kvlint.catalog.resolution import Resolution
from kvlint.record import replace

NOT_FOUND = "not in the kvlint catalog, not a local config.json, not in the Hugging Face cache"


def resolution(
    found: Derived, rows: dict[str, dict[str, Any]], arch_for_entry: Callable[[str], ModelArch]
) -> Resolution:
    """What the name rules found (`found`), as a resolution: the base's architecture with the weight
    format the name states; `rows` are the catalog's rows by key, `arch_for_entry` parses one."""
    if found.candidates:
        names = " and ".join(rows[k]["id"] for k in found.candidates)
        return Resolution(
            None, f"the name fits more than one catalogued base with different architectures: {names}"
        )
    if found.key is None and found.nearest:
        return Resolution(None, f"{NOT_FOUND}; {_nearest(found.nearest, rows, arch_for_entry)}")
    if found.key is None:
        return Resolution(None, NOT_FOUND)
    row = rows[found.key]
    base = None if row.get("kv_cache") == "none" else arch_for_entry(found.key)
    if base is None or base.family in ENCODER_ONLY:
        why = row.get("kv_cache_note") or f"an encoder-only model ({base and base.family}): no KV cache"
        return Resolution(None, f"matched by name to {row['id']}, which is {why}", no_kv_cache=True)
    source = f"{how.MATCHED_BY_NAME}: {base.id}"
    quant = base.quant
    if found.stated is not None:
        source += f" + {found.stated.label} (from the name)"
        quant = found.stated.quant
        if found.stated.gguf:
            quant = gguf_keeps(base.quant, quant)
        if quant is not None and found.stated.kv_dtype:
            quant = replace(quant, kv_cache_dtype=found.stated.kv_dtype)
    rules = ", ".join(found.rules) or "same name"
    arch = replace(base, source=source, quant=quant)
    if found.stated is not None:  # another checkpoint: the base's stored size does not apply
        arch = replace(arch, checkpoint_bytes=None, checkpoint_bytes_source="")
    unpriced = found.stated.unpriced if found.stated is not None else ""
    return Resolution(
        arch,
        source,
        derived=rules,
        derived_from=f"architecture facts from {base.id}: {base.source}",
        unpriced=unpriced,
        unpriced_fix=found.stated.fix if found.stated is not None else "",
    )


def _nearest(
    keys: tuple[str, ...], rows: dict[str, dict[str, Any]], arch_for_entry: Callable[[str], ModelArch]
) -> str:
    """The family's catalogued configs an unmatched dated or suffixed release is not read as."""
    named = []
    for key in keys[:3]:
        row = rows[key]
        arch = None if row.get("kv_cache") == "none" else arch_for_entry(key)
        positions = f" ({arch.max_positions:,} positions)" if arch is not None and arch.max_positions else ""
        named.append(row["id"] + positions)
    return (
        f"the nearest known config is {' or '.join(named)}, not used: a dated or suffixed release can "
        "change the context length, layers or experts, and the catalog has no source that this one did not"
    )


def gguf_keeps(checkpoint: Quant | None, stated: Quant | None) -> Quant | None:
    """A GGUF of a checkpoint whose routed experts are stored MXFP4 (gpt-oss) keeps them MXFP4: the
    converter does not dequantize them (ggml-org/llama.cpp@2bbcf7fc conversion/gpt_oss.py
    GptOssModel.dequant_model returns early for MXFP4) and llama-quantize does not requantize a quantized
    tensor (src/llama-quant.cpp@007dbbf3 "requantizing from type %s is disabled" without
    --allow-requantize). A 16-bit GGUF is then the checkpoint's own layout; a quantized one keeps the
    experts at MXFP4 and quantizes the rest."""
    if checkpoint is None or checkpoint.method != "mxfp4" or "experts" not in checkpoint.covers:
        return stated
    if stated is None:
        return checkpoint
    return replace(stated, kept_experts="mxfp4")
