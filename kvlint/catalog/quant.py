"""Summarise a checkpoint's quantization_config (or ModelOpt hf_quant_config.json) into a Quant.

Bits per weight include the scales and zero points each method stores; min_capability is vLLM's
get_min_capability() of the method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvlint.catalog.arch import Quant
from kvlint.record import replace

# The module patterns (kvlint/catalog/quant_modules.py) load for a quantized checkpoint only.


def _quant_dict(cfg: dict[str, Any], hf_quant: dict[str, Any] | None) -> dict[str, Any] | None:
    q = cfg.get("quantization_config") or cfg.get("compression_config")
    if not isinstance(q, dict) and isinstance(hf_quant, dict):
        algo = (hf_quant.get("quantization") or {}).get("quant_algo")
        kv = (hf_quant.get("quantization") or {}).get("kv_cache_quant_algo")
        if algo:
            q = {"quant_method": "modelopt", "quant_algo": algo, "kv_cache_quant_algo": kv}
            q["exclude_modules"] = (hf_quant.get("quantization") or {}).get("exclude_modules")
    return q if isinstance(q, dict) else None


def _patterns(q: dict[str, Any]) -> list[str]:
    """Every module pattern the config leaves unquantized (compressed-tensors ignore, modules_to_not_convert,
    ModelOpt exclude_modules)."""
    out: list[str] = []
    for key in ("modules_to_not_convert", "ignore", "exclude_modules"):
        value = q.get(key)
        if isinstance(value, list):
            out += [str(m) for m in value]
    return out


def _with_modules(quant: Quant, q: dict[str, Any]) -> Quant:
    """The Quant with the config's unquantized modules taken out, group by group and layer by layer."""
    from kvlint.catalog.quant_modules import skips

    left = skips(_patterns(q))
    unplaced = quant.unplaced + left.unplaced
    scheme = quant.scheme
    if left.everywhere & quant.covers:
        kept = ", ".join(sorted(left.everywhere & quant.covers))
        scheme += f"; {kept} left 16-bit by the config"
    if unplaced:
        scheme += (
            f"; {len(unplaced)} module pattern(s) kvlint cannot place ({unplaced[0]!r}...): priced as "
            "quantized, so the weights may be higher"
        )
    return replace(
        quant,
        covers=quant.covers - left.everywhere,
        skip_layers=left.by_layer,
        unplaced=unplaced,
        scheme=scheme,
    )


def _fp8(q: dict[str, Any], covers: frozenset[str]) -> Quant:
    block = q.get("weight_block_size")
    if isinstance(block, list) and len(block) == 2 and all(isinstance(b, int) and b > 0 for b in block):
        bits = 8 + 32 / (block[0] * block[1])  # one fp32 scale per block
        scheme = f"fp8 e4m3 weights, {block[0]}x{block[1]} block scales"
    else:
        bits, scheme = 8.0, "fp8 weights, per-tensor scales"
    return Quant("fp8", bits, scheme, covers, None, 75)


def _ct_group(body: dict[str, Any]) -> tuple[float, str] | None:
    """(bits, scheme) of one compressed-tensors config group; None when it states no weight bits."""
    weights = (body or {}).get("weights") or {}
    nbits = weights.get("num_bits")
    if not isinstance(nbits, int):
        return None
    wtype = weights.get("type", "int")
    strategy = weights.get("strategy", "tensor")
    gsize = weights.get("group_size")
    if nbits == 4 and wtype == "float" and gsize == 16:
        bits = 4 + 8 / 16 + 32 / (16 * 1024)  # NVFP4: fp8 scale per 16, global fp32
        scheme = "NVFP4 weights (fp8 scale per 16)"
    elif strategy == "group" and isinstance(gsize, int) and gsize > 0:
        zero = 0 if weights.get("symmetric", True) else nbits  # packed zero point per group
        bits = nbits + (16 + zero) / gsize
        scheme = f"{wtype}{nbits} weights, group {gsize}, bf16 scales"
    else:
        bits = float(nbits)
        scheme = f"{wtype}{nbits} weights, {strategy} scales"
    acts = (body or {}).get("input_activations") or {}
    if acts.get("num_bits"):
        scheme = scheme.replace(
            " weights", f" weights / {acts.get('type', 'int')}{acts['num_bits']} activations"
        )
    return bits, scheme


def _compressed(q: dict[str, Any], covers: frozenset[str]) -> Quant:
    """compressed-tensors: each config group's scheme on the module groups its targets reach."""
    from kvlint.catalog.quant_modules import ALL_GROUPS, targeted

    bits, scheme = 8.0, "compressed-tensors"
    groups = q.get("config_groups") or {}
    by_group: dict[str, float] = {}
    schemes: list[str] = []
    unplaced: list[str] = []
    for body in groups.values() if isinstance(groups, dict) else []:
        found = _ct_group(body)
        if found is None:
            continue
        targets = (body or {}).get("targets")
        reached = targeted([str(t) for t in targets]) if isinstance(targets, list) and targets else ALL_GROUPS
        if reached is None:
            unplaced += [f"targets {targets}"]
            reached = ALL_GROUPS
        for g in reached:
            by_group.setdefault(g, found[0])
        if not schemes:
            bits = found[0]
        schemes.append(found[1] if reached == ALL_GROUPS else f"{found[1]} on {', '.join(sorted(reached))}")
    if schemes:
        scheme = "; ".join(schemes)
    kv = q.get("kv_cache_scheme")
    kv_dtype = "fp8" if isinstance(kv, dict) and kv.get("num_bits") == 8 else None
    group_bits = tuple(sorted((g, b) for g, b in by_group.items() if b != bits))
    reach = frozenset(by_group) if by_group else covers
    return Quant(
        "compressed-tensors",
        bits,
        scheme,
        covers & reach,
        kv_dtype,
        70,
        group_bits=group_bits,
        unplaced=tuple(unplaced),
    )


def _whole(q: dict[str, Any], keys: tuple[str, ...], default: int, lo: int, hi: int) -> int:
    """A whole-number quantization setting within [lo, hi]; ValueError naming it otherwise (`bits:
    1e308` made the weights infinite, `1e400` is a float infinity int() refuses)."""
    key = next((k for k in keys if q.get(k)), None)
    raw = q[key] if key is not None else default
    try:
        n = int(raw) if not isinstance(raw, bool) and float(raw) == int(float(raw)) else None
    except (TypeError, ValueError, OverflowError):
        n = None
    if n is None or not lo <= n <= hi:
        raise ValueError(
            f"quantization_config.{key} {str(raw)[:40]!r} is not a whole number from {lo} to {hi}"
        )
    return n


def _int_group(q: dict[str, Any], covers: frozenset[str]) -> Quant:
    method = str(q.get("quant_method") or "").lower()
    nbits = _whole(q, ("bits", "w_bit"), 4, 1, 16)
    gsize = _whole(q, ("group_size", "q_group_size"), 128, -1, 1 << 24)
    gsize = gsize if gsize > 0 else 4096  # -1 = per channel
    # packed int weights + fp16 scale per group + packed zero point per group (AWQ always, GPTQ qzeros)
    bits = nbits + (16 + nbits) / gsize
    base = "awq" if method.startswith("awq") else "gptq"
    scheme = f"int{nbits} weights, group {gsize}, fp16 scales + zeros"
    return Quant(base, bits, scheme, covers, None, 75 if base == "awq" else 60)


def _mxfp4(q: dict[str, Any], covers: frozenset[str]) -> Quant:
    # gpt-oss: only the MoE experts are MXFP4 (modules_to_not_convert lists attention, router, embeddings)
    return Quant(
        "mxfp4", 4.25, "MXFP4 experts (4-bit E2M1 + E8M0 scale per 32)", frozenset({"experts"}), None, 80
    )


def _bnb(q: dict[str, Any], covers: frozenset[str]) -> Quant:
    if q.get("load_in_8bit"):
        return Quant("bitsandbytes", 8 + 32 / 4096, "bitsandbytes int8", covers, None, 70)
    double = bool(q.get("bnb_4bit_use_double_quant"))
    bits = 4 + (8 / 64 + 32 / (64 * 256)) if double else 4 + 32 / 64
    scheme = "bitsandbytes nf4" + (" double-quant" if double else "")
    return Quant("bitsandbytes", bits, scheme, covers, None, 70)


def _modelopt(q: dict[str, Any], covers: frozenset[str]) -> Quant:
    algo = str(q.get("quant_algo") or "").upper()
    kv = q.get("kv_cache_quant_algo")
    kv_dtype = "fp8" if kv and "FP8" in str(kv).upper() else None
    if "FP4" in algo:
        return Quant("modelopt_fp4", 4.5, "ModelOpt NVFP4", covers, kv_dtype, 75)
    return Quant("modelopt", 8.0, "ModelOpt FP8", covers, kv_dtype, 89)


METHODS: dict[str, Callable[[dict[str, Any], frozenset[str]], Quant]] = {
    "fp8": _fp8,
    "compressed-tensors": _compressed,
    "awq": _int_group,
    "gptq": _int_group,
    "awq_marlin": _int_group,
    "gptq_marlin": _int_group,
    "mxfp4": _mxfp4,
    "bitsandbytes": _bnb,
    "modelopt": _modelopt,
}


def read_quant(cfg: dict[str, Any], hf_quant: dict[str, Any] | None = None) -> Quant | None:
    """Summarise the checkpoint's quantization_config (or ModelOpt hf_quant_config.json)."""
    q = _quant_dict(cfg, hf_quant)
    if q is None:
        return None
    from kvlint.catalog.quant_modules import ALL_GROUPS

    method = str(q.get("quant_method") or "").lower()
    reader = METHODS.get(method)
    if reader is not None:
        return _with_modules(reader(q, ALL_GROUPS), q)
    return Quant(
        method or "unknown", 16.0, f"{method} (not modelled: counted as 16-bit)", ALL_GROUPS, None, None
    )
