"""A built TensorRT-LLM engine's config.json (trtllm-build writes it beside rank0.engine): the limits the engine
was built with and the model's parallel mapping and quantization, which the C++ executor runs with.

The file is EngineConfig.to_dict (NVIDIA/TensorRT-LLM tensorrt_llm/builder.py @008b2b8d): `version`,
`pretrained_config` (PretrainedConfig.to_dict: `dtype`, `mapping` {tp_size, pp_size}, `quantization`
{quant_algo, kv_cache_quant_algo}) and `build_config` (BuildConfig: max_batch_size, max_seq_len,
max_num_tokens, max_beam_width, `plugin_config` {tokens_per_block}). A key the file lacks is left to
trtllm-build's default (BuildConfig: max_batch_size 2048, max_num_tokens 8192, max_seq_len the model's
max_position_embeddings), as kvlint plans it. A file that is not such JSON is a KV005 at the file.
"""

from __future__ import annotations

import json
from typing import Any

from kvlint.bounds import TOKENS_MAX
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, stated
from kvlint.findings import Issue, Location

SOURCE = "tensorrt_llm/builder.py BuildConfig @008b2b8d"
# (section, key) -> (Deployment field or extra key, upper bound)
KEYS: dict[tuple[str, ...], tuple[str, int]] = {
    ("build_config", "max_batch_size"): ("max_sequences", TOKENS_MAX),
    ("build_config", "max_seq_len"): ("max_context", TOKENS_MAX),
    ("build_config", "max_num_tokens"): ("max_batched_tokens", TOKENS_MAX),
    ("build_config", "plugin_config", "tokens_per_block"): ("block_size", 1 << 20),
    ("pretrained_config", "mapping", "tp_size"): ("tensor_parallel", 4096),
    ("pretrained_config", "mapping", "pp_size"): ("pipeline_parallel", 4096),
}
TEXT_KEYS: dict[tuple[str, ...], str] = {
    ("pretrained_config", "quantization", "quant_algo"): "quantization",
    ("pretrained_config", "quantization", "kv_cache_quant_algo"): "kv_cache_dtype",
    ("pretrained_config", "dtype"): "dtype",
}


def _at(tree: Any, keys: tuple[str, ...]) -> Any:
    for k in keys:
        if not isinstance(tree, dict):
            return None
        tree = tree.get(k)
    return tree


def _line(text: str, keys: tuple[str, ...]) -> int:
    """The line of the key's first spelling after its section's (the file is indented JSON)."""
    at = 0
    for k in keys:
        found = text.find(f'"{k}"', at)
        if found < 0:
            return 1
        at = found
    return text.count("\n", 0, at) + 1


def read_engine_config(d: Deployment, text: str, shown: str) -> None:
    try:
        tree = json.loads(text)
    except (ValueError, RecursionError):
        tree = None
    if not isinstance(tree, dict) or not isinstance(tree.get("build_config"), dict):
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"{d.label()}: {shown} is not a built engine's config.json (JSON with build_config, {SOURCE}):"
                " the engine's limits are trtllm-build's defaults",
                Location(shown, 1, 1),
            )
        )
        return
    note = f"{shown} (the built engine's config.json)"
    for keys, (target, hi) in KEYS.items():
        value = _at(tree, keys)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= hi:
            continue
        _set(d, target, stated(value, Location(shown, _line(text, keys), 1), note))
    for keys, target in TEXT_KEYS.items():
        value = _at(tree, keys)
        if isinstance(value, str) and value.strip() and len(value) < 64:
            _set(d, target, stated(value.strip().lower(), Location(shown, _line(text, keys), 1), note))


def _set(d: Deployment, target: str, v: Any) -> None:
    if hasattr(d, target):
        setattr(d, target, v)
    else:
        d.extra[target] = v
