"""rules: one module per rule; this registry lists them explicitly (no plugin loading)."""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module
from typing import Any

from kvlint.rules.base import BASES, Context, Rule, Thresholds

_MODULES = (
    "kv001_invalid_input",
    "kv002_unknown_gpu",
    "kv003_unknown_model",
    "kv004_not_checkable",
    "kv005_unparsed_setting",
    "kv006_unused_suppression",
    "kv007_model_matched_by_name",
    "kv101_weights_exceed_memory",
    "kv102_kv_cache_below_max_context",
    "kv103_kv_cache_below_worst_case",
    "kv201_parallelism_gpu_mismatch",
    "kv202_heads_not_divisible_by_tp",
    "kv203_kv_heads_replicated",
    "kv204_context_beyond_model",
    "kv205_batch_limits_inconsistent",
    "kv206_dtype_unsupported_on_gpu",
    "kv207_shm_too_small",
    "kv208_utilization_out_of_range",
    "kv209_parallel_across_mig_slices",
    "kv210_gpus_exceed_pool_node",
    "kv211_group_exceeds_pool",
    "kv301_gib_gb_mixup",
    "kv302_query_heads_as_kv_heads",
    "kv303_declared_figure_mismatch",
    "kv304_ambiguous_size_suffix",
)


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule[Any], ...]:
    found: list[Rule[Any]] = []
    for name in _MODULES:
        module = import_module(f"kvlint.rules.{name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Rule)
                and obj is not Rule
                and obj not in BASES
                and obj.__module__ == module.__name__
            ):
                found.append(obj())
    return tuple(sorted(found, key=lambda r: r.id))


_BY_KEY: dict[str, Rule[Any]] = {}


def get(code_or_name: str) -> Rule[Any] | None:
    """The rule with this code (any case) or name; one dict lookup (a file may name rules 100,000 times)."""
    if not _BY_KEY:
        for rule in all_rules():
            _BY_KEY[rule.name.lower()] = rule
        for rule in all_rules():
            _BY_KEY[rule.id.upper()] = rule
    key = code_or_name.strip()
    return _BY_KEY.get(key.upper()) or _BY_KEY.get(key.lower())


__all__ = ["Context", "Rule", "Thresholds", "all_rules", "get"]
