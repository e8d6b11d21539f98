"""SGLang's command line (python -m sglang.launch_server) -> Deployment fields."""

from __future__ import annotations

import os

from kvlint.bounds import show
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment
from kvlint.engines import flag_sets
from kvlint.engines.sglang import memory_options as memory_table
from kvlint.extract.pod import adapters
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args import memory_options
from kvlint.extract.pod.engine_args.apply import apply, override_model
from kvlint.extract.pod.engine_args.options import load_table
from kvlint.findings import Issue

OPTIONS = os.path.join(os.path.dirname(__file__), "data", "options.json")  # option names and kinds

MAPPING: dict[str, tuple[str, str]] = {
    "--model-path": ("model", "text"),
    "--tp-size": ("tensor_parallel", "int"),
    "--pp-size": ("pipeline_parallel", "int"),
    "--dp-size": ("data_parallel", "int"),
    "--context-length": ("max_context", "int"),
    "--max-running-requests": ("max_sequences", "int"),
    "--mem-fraction-static": ("mem_fraction_static", "float"),
    "--max-total-tokens": ("max_total_tokens", "int"),
    "--chunked-prefill-size": ("chunked_prefill_size", "int"),
    "--max-prefill-tokens": ("max_prefill_tokens", "int"),
    "--kv-cache-dtype": ("kv_cache_dtype", "text"),
    "--quantization": ("quantization", "text"),
    "--dtype": ("dtype", "text"),
    "--page-size": ("block_size", "int"),
    "--nnodes": ("nnodes", "text"),
    "--enable-dp-attention": ("enable_dp_attention", "bool"),
    "--speculative-algorithm": ("speculative_algorithm", "text"),
    "--cuda-graph-max-bs": ("cuda_graph_max_bs", "int"),
    "--disable-cuda-graph": ("disable_cuda_graph", "bool"),
    "--enable-piecewise-cuda-graph": ("enable_piecewise_cuda_graph", "bool"),
    "--disable-piecewise-cuda-graph": ("disable_piecewise_cuda_graph", "bool"),
    "--piecewise-cuda-graph-max-tokens": ("piecewise_cuda_graph_max_tokens", "int"),
    # v0.5.14 on: per-phase graph options; the old flags above became their aliases (sglang 0.5.14
    # server_args.py:6358-6431, DeprecatedAliasStoreAction / DeprecatedStoreConstAction)
    "--cuda-graph-max-bs-decode": ("cuda_graph_max_bs", "int"),
    "--cuda-graph-max-bs-prefill": ("piecewise_cuda_graph_max_tokens", "int"),
    "--disable-prefill-cuda-graph": ("disable_piecewise_cuda_graph", "bool"),
    "--enforce-piecewise-cuda-graph": ("enable_piecewise_cuda_graph", "bool"),
    "--enable-breakable-cuda-graph": ("enable_piecewise_cuda_graph", "bool"),
    "--cuda-graph-backend-prefill": ("cuda_graph_backend_prefill", "text"),
    "--disable-decode-cuda-graph": ("disable_decode_cuda_graph", "bool"),
    "--cuda-graph-backend-decode": ("cuda_graph_backend_decode", "text"),
    "--disable-hybrid-swa-memory": ("disable_hybrid_swa_memory", "bool"),
    "--attention-backend": ("attention_backend", "text"),
    "--max-mamba-cache-size": ("max_mamba_cache_size", "int"),
    "--mamba-full-memory-ratio": ("mamba_full_memory_ratio", "float"),
    "--mamba-ssm-dtype": ("mamba_ssm_dtype", "text"),
    "--disable-radix-cache": ("disable_radix_cache", "bool"),
    "--speculative-num-draft-tokens": ("speculative_num_draft_tokens", "int"),
    "--enable-lora": ("enable_lora", "bool"),
    "--max-loras-per-batch": ("max_loras_per_batch", "int"),
    "--max-lora-rank": ("max_lora_rank", "int"),
    "--cpu-offload-gb": ("cpu_offload_gb", "float"),
    "--ep-num-redundant-experts": ("num_redundant_experts", "int"),
}
NEEDED = {
    "--model-path",
    "--tp-size",
    "--dp-size",
    "--context-length",
    "--mem-fraction-static",
    "--max-running-requests",
}


def read(d: Deployment, tokens: list[Token], env: dict[str, EnvVar], strict: bool = True) -> None:
    parsed = load_table(OPTIONS, "sglang").parse(tokens)
    if not strict:
        parsed.unknown.clear()  # a launcher with options of its own (Dynamo)
    prefixes = flag_sets.ambiguous(parsed) if strict else []  # judged against the release in force
    apply(d, parsed, MAPPING, "SGLang", NEEDED)
    adapters.record(
        d,
        adapters.vllm_lora_modules(tokens, "--lora-paths", bare_path=True),
        "SGLang turns LoRA on when --lora-paths is given",
    )
    override_model(d, parsed, "SGLang", ("--json-model-override-args",), {})
    memory_options.report(d, parsed, memory_table.table(), "SGLang")
    _graph_backends(d)
    if strict:  # judged against the release in force when it is known (kvlint/engines/flag_sets.py)
        flag_sets.record_flags(d, "sglang", flag_sets.written(parsed) + prefixes)


# --cuda-graph-backend-{prefill,decode} (v0.5.14 on): argparse `choices=Backend.ALL`, compared as written
# (sglang 0.5.14 server_args.py:1929-1936, model_executor/cuda_graph_config.py Backend.ALL; 0.5.22 drops
# tc_piecewise, parse_cuda_graph_backend_arg: "tc_piecewise was removed")
GRAPH_BACKENDS = ("full", "breakable", "tc_piecewise", "disabled")


def _graph_backends(d: Deployment) -> None:
    """A backend SGLang's argparse refuses stops the server: a KV005 at the value, which then counts for nothing
    (it was read as an explicit backend, keeping the prefill graph and its reserve)."""
    for option, key in (
        ("--cuda-graph-backend-prefill", "cuda_graph_backend_prefill"),
        ("--cuda-graph-backend-decode", "cuda_graph_backend_decode"),
    ):
        v = d.extra.get(key)
        if v is None or str(v.value) in GRAPH_BACKENDS:
            continue
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"SGLang: {option} {show(str(v.value), 40)!r} is not one of {', '.join(GRAPH_BACKENDS)}"
                " (tc_piecewise up to v0.5.21); argparse refuses it and the server does not start",
                v.where or d.where,
            )
        )
        del d.extra[key]
