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
    "kv_cache_config.dtype": "kv_cache_dtype",
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


def read_file(d: Deployment, found: Any) -> None:
    """The LLM-API options file the launch names, from a mounted ConfigMap (`found`: its text and where, or
    why it is out of reach; None: nothing mounted there). Without its text the settings it may override
    (parallelism, max_seq_len, kv_cache_config) are unknown, so the workload is not planned from a guess
    (one KV004)."""
    from kvlint.engines.trtllm.options import not_modelled

    path = d.extra.get("llm_api_options")
    if path is None or not str(path.value).strip():
        return
    text = getattr(found, "text", None)
    if text is not None:
        options = _mapping(text)
        if options is not None:
            apply(d, options, found.where or path.where or d.where, f"{path.value} (LLM-API options)")
            return
        why = "its text is not a YAML mapping"
    else:
        why = getattr(found, "why", "") or (
            "no ConfigMap of this file or beside it is mounted at that path (a start script may write it)"
        )
    not_modelled(
        d,
        f"the LLM-API options file {path.value} (keyword arguments of tensorrt_llm.LLM that override the"
        f" command line: parallelism, max_seq_len, kv_cache_config) cannot be read: {why}; the settings in force"
        " are unknown",
        "trtllm-options-file",
    )


def _mapping(text: str) -> dict[str, Any] | None:
    from kvlint.load import load_bytes
    from kvlint.load.tree import Mapping, to_plain

    loaded = load_bytes(text.encode("utf-8"), "llm-api-options.yaml", 1024 * 1024)
    if loaded.issues or not loaded.documents or not isinstance(loaded.documents[0].root, Mapping):
        return None
    plain = to_plain(loaded.documents[0].root, [100_000])
    return plain if isinstance(plain, dict) else None
