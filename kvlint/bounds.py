"""The accepted range of every count, size and fraction kvlint reads from input: one table, every reader.

A number read from a manifest, a spec, engine arguments, a Helm values file, a Ray config or a
model's config.json is checked against this table before any arithmetic uses it: an
out-of-range value is a located finding naming the accepted range (KV001 in kvlint's own spec,
KV005 elsewhere) and the value is not used, so the plan never multiplies, loops over or formats
a value no real deployment has (`layers: 1000000`, `--pipeline-parallel-size=<30 digits>`,
`--block-size=0`, `nan`). The limits are generous — far above any real model or cluster — and
exist so that the work per input stays bounded:

- tokens up to 2**40 (a trillion; the longest real context is about 10**7);
- tensor/pipeline/data parallelism up to 4,096; GPUs per replica up to 65,536;
- layers up to 10,000 (the deepest real model has about 200); heads and head size up to 65,536;
- sizes up to 2**60 bytes (an exbibyte); fractions finite, in (0, 1] or [0, 1).

The native spec's schema takes its limits from here as well (extract/kinds/spec.py).
"""

from __future__ import annotations

import math
from typing import Any

from kvlint.record import record

TOKENS_MAX = 1 << 40
PARALLEL_MAX = 4096
GPUS_MAX = 1 << 16
LAYERS_MAX = 10_000
HEADS_MAX = 1 << 16
BYTES_MAX = 1 << 60


@record(frozen=True)
class Range:
    """lo <= value <= hi (lo excluded when `lo_open`); `integer` refuses fractional values."""

    what: str  # how messages name it: "tensor-parallel size"
    lo: float
    hi: float
    integer: bool = True
    lo_open: bool = False
    owner: str = ""  # a rule that reports finite out-of-range values itself (KV208 for fractions)

    def describe(self) -> str:
        if not self.integer:
            left = "(" if self.lo_open else "["
            return f"a finite number in {left}{_num(self.lo)}, {_num(self.hi)}]"
        return f"a whole number from {_num(self.lo)} to {_num(self.hi)}"

    def problem(self, value: Any) -> str | None:
        """Why `value` is refused, or None when it is in range (or not a number at all: the
        reader that knows the field reports a wrong type)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return "is not a finite number"
        if self.integer and isinstance(value, float) and value != int(value):
            return "is not a whole number"
        low = value <= self.lo if self.lo_open else value < self.lo
        if low or value > self.hi:
            return "is out of range"
        return None


def _num(x: float) -> str:
    if x == int(x):
        return f"{int(x):,}"
    return f"{x:g}"


def show(value: Any, limit: int = 40) -> str:
    """A number (or text) as messages echo it: never raises on a 5,000-digit integer, never long."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        digits = int(value.bit_length() * 0.30103) + 1  # no decimal conversion: it raises past 4,300 digits
        return f"{'-' if value < 0 else ''}a number of about {digits:,} digits"
    text = repr(value) if isinstance(value, float) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tokens(what: str, lo: int = 1) -> Range:
    return Range(what, lo, TOKENS_MAX)


# Deployment fields (every reader fills these); `extra` knobs share the table under their own name.
FIELDS: dict[str, Range] = {
    "gpus": Range("GPU count", 0, GPUS_MAX),
    "gpus_per_pod": Range("GPUs per pod", 0, GPUS_MAX),
    "pods": Range("pods per replica", 1, GPUS_MAX),
    "tensor_parallel": Range("tensor-parallel size", 1, PARALLEL_MAX),
    "pipeline_parallel": Range("pipeline-parallel size", 1, PARALLEL_MAX),
    "data_parallel": Range("data-parallel size", 1, PARALLEL_MAX),
    "max_context": _tokens("context length"),
    "max_sequences": Range("maximum number of sequences", 1, 1 << 32),
    "max_batched_tokens": _tokens("batched-token limit"),
    "block_size": Range("KV-cache block size", 1, 1 << 16),
    "kv_cache_memory_bytes": Range("KV-cache memory", 1, BYTES_MAX),
    "gpu_memory_utilization": Range(
        "GPU memory utilization", 0, 1, integer=False, lo_open=True, owner="KV208"
    ),
    "fragmentation": Range("fragmentation", 0, 0.999999, integer=False),
    "swap_space": Range("swap space (GiB)", 0, 1 << 30, integer=False),
    # engine-specific knobs (Deployment.extra)
    "mem_fraction_static": Range(
        "SGLang mem_fraction_static", 0, 1, integer=False, lo_open=True, owner="KV208"
    ),
    "cuda_memory_fraction": Range(
        "TGI CUDA memory fraction", 0, 1, integer=False, lo_open=True, owner="KV208"
    ),
    "max_total_tokens": _tokens("total-token limit"),
    "chunked_prefill_size": _tokens("chunked-prefill size", lo=-1),  # SGLang: -1 turns chunking off
    "max_prefill_tokens": _tokens("prefill-token limit"),
    "max_input_tokens": _tokens("input-token limit"),
    "max_batch_prefill_tokens": _tokens("prefill batch-token limit"),
    "max_batch_total_tokens": _tokens("total batch-token limit"),
    "max_batch_size": Range("TGI max_batch_size", 1, 1 << 32),
    "speculate": Range("TGI speculative tokens", 0, 1 << 16),
    "cpu_offload_gb": Range("CPU offload (GiB)", 0, 1 << 30, integer=False),
    "num_gpu_blocks_override": Range("GPU block count override", 1, 1 << 40),
    "num_redundant_experts": Range("redundant experts", 0, 1 << 20),  # EPLB's extra copies (weights.py)
    # SGLang's reserved memory grows with it (engines/sglang/defaults.py): bounded like a count
    "cuda_graph_max_bs": Range("SGLang CUDA-graph batch size", 1, 1 << 20),
    # v0.5.5.post1-v0.5.7 reserve max_tokens // 4 (// 8) MiB for it; v0.5.8 on, its capture sizes
    "piecewise_cuda_graph_max_tokens": _tokens("SGLang piecewise CUDA-graph token limit"),
    # SGLang's mamba state pool of hybrid models (capacity/state.py)
    "max_mamba_cache_size": Range("SGLang mamba state slots", 1, 1 << 32),
    "speculative_num_draft_tokens": Range("SGLang speculative draft tokens", 1, 1 << 16),
    "mamba_full_memory_ratio": Range("SGLang mamba_full_memory_ratio", 0, 1000, integer=False, lo_open=True),
    # vLLM LoRA (engines/vllm/lora.py names their memory): LoRAConfig.max_loras >= 1, max_lora_rank <= 512
    "max_loras": Range("vLLM max_loras", 1, 1 << 20),
    "max_lora_rank": Range("LoRA max_lora_rank", 1, 1 << 16),
    # vLLM CompilationConfig.max_cudagraph_capture_size: the largest batch captured as a CUDA graph
    "max_cudagraph_capture_size": Range("vLLM max_cudagraph_capture_size", 1, 1 << 20),
    "max_loras_per_batch": Range("SGLang max_loras_per_batch", 1, 1 << 20),
    # TGI's llama.cpp router (backends/llamacpp/src/main.rs: usize options)
    "llamacpp_n_gpu_layers": Range("TGI llama.cpp --n-gpu-layers", 0, 1 << 32),
    "llamacpp_n_ctx": _tokens("TGI llama.cpp --max-batch-total-tokens"),
    "llamacpp_n_threads": Range("TGI llama.cpp --n-threads", 1, 1 << 20),
    "llamacpp_n_threads_batch": Range("TGI llama.cpp --n-threads-batch", 1, 1 << 20),
}

# Model architecture facts: the spec's `architecture:` keys and config.json's keys.
ARCHITECTURE: dict[str, Range] = {
    "params": Range("parameter count", 1, 10**15),
    "layers": Range("layer count", 1, LAYERS_MAX),
    "query_heads": Range("query-head count", 1, HEADS_MAX),
    "kv_heads": Range("KV-head count", 1, HEADS_MAX),
    "head_dim": Range("head size", 1, HEADS_MAX),
    "hidden_size": Range("hidden size", 1, 1 << 20),
    "intermediate_size": Range("intermediate size", 0, 1 << 24),
    "vocab_size": Range("vocabulary size", 1, 1 << 24),
    "max_positions": _tokens("maximum positions"),
    "sliding_window": _tokens("sliding window"),
    "kv_lora_rank": Range("MLA latent rank", 1, HEADS_MAX),
    "part_head_dim": Range("partial head size", 0, HEADS_MAX),
    "experts": Range("expert count", 0, HEADS_MAX),
    "layer_index": Range("layer index", 0, LAYERS_MAX),
    "rope_factor": Range(
        "RoPE scaling factor", 0, 1 << 20, integer=False, lo_open=True
    ),  # 0 would scale the context to nothing
}

# MoE counts and layer indices the per-layer readers turn into int() or add (a list, map or string there crashed)
_MOE_KEYS: dict[str, str] = {
    "num_experts_per_tok": "experts",
    "n_shared_experts": "experts",
    "num_shared_experts": "experts",
    "moe_num_experts": "experts",
    "moe_k": "experts",
    "moe_num_shared_experts": "experts",
    "first_k_dense_replace": "layer_index",
    "moe_layer_start_index": "layer_index",
    "moe_layer_interval": "layers",
    "moe_layer_freq": "layers",
    "q_lora_rank": "kv_lora_rank",
}

# DeepSeek sparse attention's indexer sizes (catalog/hf_config._dsa_fields; vLLM deepseek_v2.py computes with them)
_DSA_KEYS: dict[str, str] = {
    "index_head_dim": "head_dim",
    "index_topk_freq": "layers",
    "index_skip_topk_offset": "layer_index",
}

# config.json keys -> the architecture fact they give
CONFIG_KEYS: dict[str, str] = {
    "num_hidden_layers": "layers",
    "n_layer": "layers",
    "num_layers": "layers",
    "hidden_size": "hidden_size",
    "n_embd": "hidden_size",
    "d_model": "hidden_size",
    "num_attention_heads": "query_heads",
    "n_head": "query_heads",
    "num_key_value_heads": "kv_heads",
    "num_kv_heads": "kv_heads",
    "n_head_kv": "kv_heads",
    "multi_query_group_num": "kv_heads",
    "head_dim": "head_dim",
    "hidden_size_per_head": "head_dim",
    "vocab_size": "vocab_size",
    "padded_vocab_size": "vocab_size",
    "kv_lora_rank": "kv_lora_rank",
    "qk_rope_head_dim": "part_head_dim",
    "qk_nope_head_dim": "part_head_dim",
    "v_head_dim": "part_head_dim",
    "factor": "rope_factor",
    "intermediate_size": "intermediate_size",
    "moe_intermediate_size": "intermediate_size",
    "max_position_embeddings": "max_positions",
    "num_local_experts": "experts",
    "num_experts": "experts",
    "n_routed_experts": "experts",
    **_MOE_KEYS,
    **_DSA_KEYS,
}
# their readers use the value as a number directly: a string is refused too (no reader reports it)
_READ_AS_INT = frozenset(_MOE_KEYS) | frozenset(_DSA_KEYS)

# The author's planning figures (`budget:`): sizes in bytes, and two plain numbers.
BUDGET_BYTES = Range("size", 0, BYTES_MAX)
BUDGET: dict[str, Range] = {
    "max_concurrency": Range("concurrency", 0, TOKENS_MAX, integer=False),
    "fragmentation": FIELDS["fragmentation"],
}


def config_problem(config: dict[str, Any]) -> str | None:
    """The first config.json value out of range (the text model's keys, its RoPE scaling factor,
    its vision tower's sizes), or None. Keys not in the table are the reader's business."""
    scopes = [("", config, False), ("vision_config.", config.get("vision_config"), False)]
    scopes += [(f"{k}.", config.get(k), True) for k in ("rope_scaling", "rope_parameters")]
    for prefix, scope, rope in scopes:
        if not isinstance(scope, dict):
            continue
        for key, value in scope.items():
            fact = CONFIG_KEYS.get(key)
            if fact is None or value is None or (fact == "rope_factor") != rope:
                continue
            r = ARCHITECTURE[fact]
            # a list, mapping or boolean where a count belongs is refused here, by name: the readers
            # would crash on int([8]) or take an empty {} for "absent" (security review F26)
            wrong = (bool, list, dict, str) if key in _READ_AS_INT else (bool, list, dict)
            why = "is not a number" if isinstance(value, wrong) else r.problem(value)
            if why is not None:
                return f"config {prefix}{key} {show(value)} {why}: expected {r.describe()}"
    return None


# Work per file: past these, kvlint says what it left out instead of going on (security review F12).
DOCUMENTS_MAX = 2_000  # YAML documents read from one file
WORKLOADS_MAX = 300  # serving workloads checked in one file (each is resolved and planned)
FINDINGS_PER_RULE_MAX = 100  # findings of one rule listed for one file; then one "N more"
ISSUES_PER_FILE_MAX = 200  # loader problems (duplicate keys …) listed for one file
NODES_PER_DOCUMENT_MAX = 150_000  # distinct YAML values in one document (a large CRD has ~20,000)
