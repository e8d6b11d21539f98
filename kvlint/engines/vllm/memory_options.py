"""vLLM's memory options: the table is data/memory_options.json (option -> status, the kvlint function that
applies it or what the plan leaves out, the vllm==X:path:line that says so); here are the functions that read
an option's value as written for the rows that name them (`detail`)."""

from __future__ import annotations

from functools import cache

from kvlint.engines.memory_entry import MemoryOption, from_data
from kvlint.extract.pod.engine_args.options import json_value

# KV connectors that transfer from the KV-cache pool's own memory, registered in place (no GPU buffer of their own)
IN_PLACE_CONNECTORS = frozenset({"NixlConnector", "MooncakeConnector", "MoRIIOConnector"})
# compilation-config keys read into the plan (vllm.py reader: max_cudagraph_capture_size, or cudagraph_mode NONE)
COMPILATION_READ = frozenset({"cudagraph_capture_sizes", "max_cudagraph_capture_size"})
# compilation-config keys that change which CUDA graphs are captured (the rest: compiler passes, custom ops)
COMPILATION_GRAPHS = frozenset(
    {"cudagraph_mode", "full_cuda_graph", "use_cudagraph", "cudagraph_num_of_warmups"}
)


def _json(text: str):
    try:
        return json_value(text)
    except ValueError:
        return None


def _connector(text: str) -> str | None:
    """None for a connector that registers the pool in place; else which connector it is."""
    config = _json(text)
    name = config.get("kv_connector") if isinstance(config, dict) else None
    if name in IN_PLACE_CONNECTORS:
        return None
    return f" (kv_connector {name})" if name else " (a configuration kvlint cannot read)"


_TOWER = "every modality's limit is 0: models that mark their encoder as a tower (_mark_tower_model) do not load it"


def _mm_limits(text: str) -> str | None:
    """Limits of 0 for every modality stated: the encoder is not even loaded (vllm==0.33.0 interfaces.py:389-390)."""
    limits = _json(text)
    counts = (
        [v.get("count") if isinstance(v, dict) else v for v in limits.values()]
        if isinstance(limits, dict)
        else []
    )
    if not counts or not all(c == 0 for c in counts):
        return None  # the dummy batch it sets is in the plan (encoder.py)
    return (
        f" ({_TOWER} (vllm==0.33.0:vllm/model_executor/models/interfaces.py:347-395, from 0.15.0; before, some "
        "models by their own check, e.g. vllm==0.14.0 qwen2_5_vl.py:1186-1197), so its weights are not on the "
        "GPU though kvlint counts them)"
    )


def _tp_mode(text: str) -> str | None:
    """Only `data` moves memory kvlint prices: the default `weights` splits the tower like the text model."""
    return "" if text.strip().strip("'\"") == "data" else None


def _speculative(text: str) -> str | None:
    """method ngram proposes from the prompt on the CPU (numba; vllm==0.33.0 gpu_model_runner.py:614-617): no
    draft model, only num_speculative_tokens lookahead slots per sequence: nothing kvlint leaves out worth a KV004."""
    config = _json(text)
    return None if isinstance(config, dict) and config.get("method") == "ngram" else ""


def _all2all(text: str) -> str | None:
    backend = text.strip().strip("'\"")
    return None if backend in ("allgather_reducescatter", "naive") else f" (backend {backend})"


def _compilation(text: str) -> str | None:
    """None when the configuration states no CUDA-graph setting kvlint leaves out (a bare level such as `3`,
    compiler passes, custom ops, or capture sizes / cudagraph_mode NONE, which the reader applies)."""
    config = _json(text)
    if isinstance(config, int):
        return None
    if not isinstance(config, dict):
        return None  # not JSON: the reader's KV005 says so (vllm.json_config)
    graphs = sorted(k for k in config if k in COMPILATION_GRAPHS)
    mode = str(config.get("cudagraph_mode", "")).upper()
    if not graphs or graphs == ["cudagraph_mode"] and mode == "NONE":
        return None
    return " (" + ", ".join(f"{k} {config[k]}" for k in graphs) + ")"


@cache
def table() -> dict[str, MemoryOption]:
    """Option (or environment variable) -> what kvlint does with it (data/memory_options.json, read on first use)."""
    return from_data(
        "vllm",
        "memory_options",
        {
            "_speculative": _speculative,
            "_mm_limits": _mm_limits,
            "_tp_mode": _tp_mode,
            "_connector": _connector,
            "_all2all": _all2all,
            "_compilation": _compilation,
        },
    )
