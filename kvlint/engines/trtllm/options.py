"""trtllm-serve's options, NVIDIA Dynamo's TensorRT-LLM worker options -> Deployment fields.

trtllm-serve (tensorrt_llm/commands/serve.py `serve`, click options with underscores): `MODEL` positional,
--backend, --max_batch_size, --max_num_tokens, --max_seq_len, --max_beam_width, --tp_size, --pp_size,
--ep_size, --kv_cache_free_gpu_memory_fraction, --extra_llm_api_options (also --config from 1.1) naming a
YAML file of LLM-API arguments (llm_api.py reads it when its text is at hand). Dynamo's worker
(ai-dynamo/dynamo components/src/dynamo/trtllm/backend_args.py DynamoTrtllmArgGroup, argparse, each option
also read from DYN_TRTLLM_*): --model (--model-path before), --tensor-parallel-size, --pipeline-parallel-size,
--expert-parallel-size, --kv-block-size, --max-batch-size, --max-num-tokens, --max-seq-len,
--free-gpu-memory-fraction, --extra-engine-args (the same YAML), --override-engine-args (a JSON dict).
"""

from __future__ import annotations

import os

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment, stated
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args.apply import apply, env_value
from kvlint.extract.pod.engine_args.options import load_table
from kvlint.findings import Issue, IssueKind

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


def read(d: Deployment, tokens: list[Token], env: dict[str, EnvVar], strict: bool = True) -> None:
    """trtllm-serve's command line (`serve` is its default subcommand; the model its first positional)."""
    if tokens and tokens[0].text == "serve":
        tokens = tokens[1:]
    parsed = load_table(OPTIONS, "trtllm").parse(tokens)
    if parsed.positionals and "--model" not in parsed.values:
        first = parsed.positionals[0]
        if not first.unresolved:
            d.model = stated(first.text, first.where or d.where, first.note)
    apply(d, parsed, MAPPING, "TensorRT-LLM", NEEDED)


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
