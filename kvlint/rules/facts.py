"""Small helpers rules share for naming values and pointing at them."""

from __future__ import annotations

from kvlint.deployment import Deployment, Value
from kvlint.findings import Location


def where_of(d: Deployment, *values: Value | None, stated_only: bool = True) -> Location:
    """The first value written in the file (or, failing that, any located value; then the workload)."""
    for v in values:
        if v is not None and v.where is not None and (v.origin == "stated" or not stated_only):
            return v.where
    if stated_only:
        for v in values:
            if v is not None and v.where is not None:
                return v.where
    return d.args_where or d.where


def shown(v: Value | None, fmt: str = "{:,}") -> str:
    """'8,192' when stated, '8,192 (vLLM default ...)' when defaulted or inferred."""
    if v is None:
        return "unknown"
    text = (
        fmt.format(v.value)
        if isinstance(v.value, (int, float)) and not isinstance(v.value, bool)
        else str(v.value)
    )
    return text if v.origin == "stated" else f"{text} ({v.note or v.origin})"


def flag(engine: str, setting: str) -> str:
    """How the setting is spelled for the engine, for fixes."""
    table = {
        "vllm": {
            "max_context": "--max-model-len",
            "max_sequences": "--max-num-seqs",
            "tensor_parallel": "--tensor-parallel-size",
            "kv_cache_dtype": "--kv-cache-dtype",
            "utilization": "--gpu-memory-utilization",
            "quantization": "--quantization",
        },
        "sglang": {
            "max_context": "--context-length",
            "max_sequences": "--max-running-requests",
            "tensor_parallel": "--tp",
            "kv_cache_dtype": "--kv-cache-dtype",
            "utilization": "--mem-fraction-static",
            "quantization": "--quantization",
        },
        "tgi": {
            "max_context": "--max-total-tokens",
            "max_sequences": "--max-concurrent-requests",
            "tensor_parallel": "--num-shard",
            "kv_cache_dtype": "--kv-cache-dtype",
            "utilization": "CUDA_MEMORY_FRACTION",
            "quantization": "--quantize",
        },
    }
    return table.get(engine, table["vllm"]).get(setting, setting)


def spec_key(d: Deployment, setting: str, engine: str) -> str:
    """The name to tell the user: the spec key in a ServingSpec, the engine flag elsewhere."""
    return setting if d.kind == "ServingSpec" else flag(engine, setting)
