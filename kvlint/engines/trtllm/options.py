"""trtllm-serve's options, NVIDIA Dynamo's TensorRT-LLM worker options -> Deployment fields.

trtllm-serve (tensorrt_llm/commands/serve.py `serve`, click options with underscores): `MODEL` positional,
--backend, --max_batch_size, --max_num_tokens, --max_seq_len, --max_beam_width, --tp_size, --pp_size,
--ep_size, --kv_cache_free_gpu_memory_fraction, --extra_llm_api_options (also --config from 1.1) naming a
YAML file of LLM-API arguments (read_file reads it when its text is at hand). Dynamo's worker
(ai-dynamo/dynamo components/src/dynamo/trtllm/backend_args.py DynamoTrtllmArgGroup, argparse, each option
also read from DYN_TRTLLM_*): --model (--model-path before), --tensor-parallel-size, --pipeline-parallel-size,
--expert-parallel-size, --kv-block-size, --max-batch-size, --max-num-tokens, --max-seq-len,
--free-gpu-memory-fraction, --extra-engine-args (the same YAML), --override-engine-args (a JSON dict).
"""

from __future__ import annotations

import os
from typing import Any

from kvlint.bounds import show
from kvlint.codes import NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment, stated
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args.apply import apply, env_value
from kvlint.extract.pod.engine_args.options import load_table
from kvlint.findings import Issue, IssueKind, Location, Severity

OPTIONS = os.path.join(os.path.dirname(__file__), "data", "options.json")
DYNAMO_OPTIONS = os.path.join(os.path.dirname(__file__), "data", "dynamo_options.json")

MAPPING: dict[str, tuple[str, str]] = {
    "--model": ("model", "text"),
    "--backend": ("backend", "text"),
    "--tp_size": ("tensor_parallel", "int"),
    "--pp_size": ("pipeline_parallel", "int"),
    "--ep_size": ("moe_expert_parallel_size", "int"),
    "--max_seq_len": ("max_context", "int"),
    "--max_batch_size": ("max_sequences", "int"),
    "--max_num_tokens": ("max_batched_tokens", "int"),
    "--max_beam_width": ("max_beam_width", "int"),
    "--kv_cache_free_gpu_memory_fraction": ("gpu_memory_utilization", "float"),
    "--extra_llm_api_options": ("llm_api_options", "text"),
    "--kv_cache_dtype": ("kv_cache_dtype", "text"),
}
DYNAMO_MAPPING: dict[str, tuple[str, str]] = {
    "--model": ("model", "text"),
    "--tensor-parallel-size": ("tensor_parallel", "int"),
    "--pipeline-parallel-size": ("pipeline_parallel", "int"),
    "--expert-parallel-size": ("moe_expert_parallel_size", "int"),
    "--kv-block-size": ("block_size", "int"),
    "--max-seq-len": ("max_context", "int"),
    "--max-batch-size": ("max_sequences", "int"),
    "--max-num-tokens": ("max_batched_tokens", "int"),
    "--max-beam-width": ("max_beam_width", "int"),
    "--free-gpu-memory-fraction": ("gpu_memory_utilization", "float"),
    "--extra-engine-args": ("llm_api_options", "text"),
    "--enable-attention-dp": ("enable_attention_dp", "bool"),
}
NEEDED = {
    "--tp_size",
    "--pp_size",
    "--max_seq_len",
    "--kv_cache_free_gpu_memory_fraction",
    "--max_num_tokens",
}
DYNAMO_NEEDED = {
    "--tensor-parallel-size",
    "--pipeline-parallel-size",
    "--max-seq-len",
    "--free-gpu-memory-fraction",
    "--max-num-tokens",
}


def read(
    d: Deployment, tokens: list[Token], env: dict[str, EnvVar], strict: bool = True, argv: bool = True
) -> None:
    """trtllm-serve's command line (`serve` is its default subcommand; the model its first positional).
    The flags it writes are judged against the release in force (kvlint/engines/flag_sets.py: click stops
    on an option its release lacks), where they are a real command line (`argv`) of trtllm-serve alone."""
    if tokens and tokens[0].text == "serve":
        tokens = tokens[1:]
    parsed = load_table(OPTIONS, "trtllm").parse(tokens)
    if parsed.positionals and "--model" not in parsed.values:
        first = parsed.positionals[0]
        if not first.unresolved:
            d.model = stated(first.text, first.where or d.where, first.note)
    apply(d, parsed, MAPPING, "TensorRT-LLM", NEEDED)
    if strict and argv:
        from kvlint.engines import flag_sets

        flag_sets.record_flags(d, "trtllm", flag_sets.written(parsed))


def read_dynamo(d: Deployment, tokens: list[Token], env: dict[str, EnvVar]) -> None:
    """`python -m dynamo.trtllm …`: Dynamo's options, each also from its DYN_TRTLLM_* variable (the command
    line wins, argparse default=os.environ.get)."""
    parsed = load_table(DYNAMO_OPTIONS, "trtllm-dynamo").parse(tokens)
    for option in DYNAMO_MAPPING:
        var = "DYN_TRTLLM_" + option[2:].replace("-", "_").upper()
        if option not in parsed.values:
            tok = env_value(env, var)
            if tok is not None:
                parsed.values[option] = (Token(option, tok.where, tok.note), tok, False)
    apply(d, parsed, DYNAMO_MAPPING, "TensorRT-LLM (Dynamo worker)", DYNAMO_NEEDED)


def not_modelled(d: Deployment, why: str, kind: str, engine_not_modelled: bool = False) -> None:
    """A TensorRT-LLM launch kvlint cannot plan: one KV004 saying why (`engine_not_modelled`: a backend kvlint
    does not model, counted with the engines it does not model; else what it needs is not in the file)."""
    where = (d.engine.where if d.engine else None) or d.where
    how = IssueKind.ENGINE_NOT_MODELLED if engine_not_modelled else None
    d.issues.append(Issue(NOT_CHECKABLE, f"{d.label()}: {why}: not checked", where, kind=how))
    d.extra["unsupported"] = stated(kind, where)
    # the parallel sizes are among what it leaves unknown: no guess at idle GPUs (KV201)
    d.unreadable.extend(f for f in ("tensor_parallel", "pipeline_parallel") if f not in d.unreadable)


TRITON = (
    "Triton's TensorRT-LLM backend reads its settings (engine directory, kv_cache_free_gpu_mem_fraction,"
    " max_tokens_in_paged_kv_cache, batch sizes) from the model repository's config.pbtxt"
    " (triton-inference-server/tensorrtllm_backend all_models/inflight_batcher_llm/tensorrt_llm/config.pbtxt),"
    " which is not in this file, and its engine was built beforehand with its own limits"
)
SCRIPT = (
    "TensorRT-LLM is started by a script of the image or the command whose options are not on the command"
    " line, so the model and its settings are unknown"
)
DISAGGREGATED = (
    "`trtllm-serve disaggregated` is the router of a disaggregated deployment: it serves no model of its own"
    " (its context and generation workers, each a `trtllm-serve` of their own, are the workloads)"
)
AUTODEPLOY = (
    "TensorRT-LLM's AutoDeploy backend (--backend _autodeploy) sizes its KV cache its own way"
    " (tensorrt_llm/_torch/auto_deploy, free_mem_ratio), which kvlint does not model"
)


# --- the LLM-API options YAML (trtllm-serve --extra_llm_api_options / --config, Dynamo --extra-engine-args):
# keyword arguments of tensorrt_llm.LLM that override the command line's (serve.py
# update_llm_args_with_extra_dict); read when its text is at hand (a mounted ConfigMap), said when it is not.

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


def apply_llm_api(d: Deployment, options: dict[str, Any], where: Location, note: str) -> None:
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
        value, refused = _typed(key, flat[key])
        if refused:
            d.issues.append(
                Issue(
                    UNPARSED_SETTING,
                    f"{d.label()}: TensorRT-LLM's LLM API rejects {key} {show(str(flat[key]), 60)!r} in {note}:"
                    f" {refused} (its arguments are pydantic fields, tensorrt_llm/llmapi/llm_args.py"
                    f" @{LLM_ARGS_COMMIT}: the launch fails validating them)",
                    where,
                    severity=Severity.ERROR,
                )
            )
            d.unreadable.append(target)
            continue
        v = stated(value, where, note)
        if hasattr(d, target) and target != "backend":
            setattr(d, target, v)
        else:
            d.extra[target] = v
    d.extra.pop("llm_api_options", None)


# The kind of each numeric LLM-API argument (tensorrt_llm/llmapi/llm_args.py: int fields, the KV fraction a
# float); pydantic's lax mode takes a number, or a string that spells one, and rejects anything else.
LLM_ARGS_COMMIT = "0004396720054fd8e205cbf616f21f0b57c6b412"
NUMERIC: dict[str, type] = {
    "tensor_parallel_size": int,
    "pipeline_parallel_size": int,
    "moe_expert_parallel_size": int,
    "max_seq_len": int,
    "max_batch_size": int,
    "max_num_tokens": int,
    "max_beam_width": int,
    "kv_cache_config.free_gpu_memory_fraction": float,
    "kv_cache_config.max_tokens": int,
    "kv_cache_config.tokens_per_block": int,
}


def _typed(key: str, value: Any) -> tuple[Any, str]:
    """The value as the LLM API validates it, and "" ; or (None, why it is rejected)."""
    kind = NUMERIC.get(key)
    if kind is None:
        return value, ""
    want = "an integer" if kind is int else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None, f"not {want}"
    try:
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except ValueError:
        return None, f"not {want}"
    if kind is int:
        if not number.is_integer():
            return None, "not an integer"
        return int(number), ""
    return number, ""


def read_file(d: Deployment, found: Any) -> None:
    """The LLM-API options file the launch names, from a mounted ConfigMap (`found`: its text and where, or
    why it is out of reach; None: nothing mounted there). Without its text the settings it may override
    (parallelism, max_seq_len, kv_cache_config) are unknown, so the workload is not planned from a guess
    (one KV004)."""
    path = d.extra.get("llm_api_options")
    if path is None or not str(path.value).strip():
        return
    text = getattr(found, "text", None)
    if text is not None:
        options = _mapping(text)
        if options is not None:
            apply_llm_api(d, options, found.where or path.where or d.where, f"{path.value} (LLM-API options)")
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
