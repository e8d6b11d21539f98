"""The LLM-API options YAML (trtllm-serve --extra_llm_api_options / --config, Dynamo --extra-engine-args):
keyword arguments of tensorrt_llm.LLM that override the command line's (serve.py
update_llm_args_with_extra_dict). kvlint reads the keys that change the KV cache when the file's text is
at hand, and says so when it is not."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment, stated
from kvlint.findings import Location

# LLM-API key -> (Deployment field or extra key); kv_cache_config's keys under "kv_cache_config."
KEYS: dict[str, str] = {
    "tensor_parallel_size": "tensor_parallel",
    "pipeline_parallel_size": "pipeline_parallel",
    "moe_expert_parallel_size": "moe_expert_parallel_size",
    "max_seq_len": "max_context",
    "max_batch_size": "max_sequences",
    "max_num_tokens": "max_batched_tokens",
    "max_beam_width": "max_beam_width",
    "backend": "backend",
    "enable_attention_dp": "enable_attention_dp",
    "enable_chunked_prefill": "enable_chunked_prefill",
    "kv_cache_config.free_gpu_memory_fraction": "gpu_memory_utilization",
    "kv_cache_config.max_tokens": "kv_max_tokens",
    "kv_cache_config.dtype": "kv_dtype",
    "kv_cache_config.tokens_per_block": "block_size",
    "kv_cache_config.enable_block_reuse": "enable_block_reuse",
}


def apply(d: Deployment, options: dict[str, Any], where: Location, note: str) -> None:
    """The LLM-API keys of a YAML mapping onto the deployment (they win over the command line)."""
    flat: dict[str, Any] = {}
    for key, value in options.items():
        if key == "kv_cache_config" and isinstance(value, dict):
            flat.update({f"kv_cache_config.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    for key, target in KEYS.items():
        if key not in flat or flat[key] is None or isinstance(flat[key], (dict, list)):
            continue
        v = stated(flat[key], where, note)
        if hasattr(d, target) and target != "backend":
            setattr(d, target, v)
        else:
            d.extra[target] = v
    d.extra.pop("llm_api_options", None)


def note_unread(d: Deployment) -> None:
    """A named options file whose text kvlint does not have: the settings it may override (parallelism,
    max_seq_len, kv_cache_config) are unknown, so the workload is not planned from a guess (one KV004)."""
    from kvlint.engines.trtllm.options import not_modelled

    path = d.extra.get("llm_api_options")
    if path is None or not str(path.value).strip():
        return
    not_modelled(
        d,
        f"the LLM-API options file {path.value} (keyword arguments of tensorrt_llm.LLM that override the"
        " command line: parallelism, max_seq_len, kv_cache_config) is not in this file or beside it, so the"
        " settings in force are unknown",
        "trtllm-options-file",
    )
