"""The compute buffer llama.cpp's scheduler reserves for one ubatch (`llama_context: CUDA0 compute buffer size`),
and the memory outside its buffers: both kvlint's estimates, said so in the plan (plan.py has the rest)."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.units import GIB

# hidden-size F32 rows per token beside a phase's largest tensor (kvlint's fit on the calibration logs,
# benchmarks/calibration/llamacpp_startup_logs.yaml): one beside the logits (l-001), four beside the attention
# scores and their mask (l-009, l-010, and l-005 of benchmarks/calibration/ollama_startup_logs.yaml)
ROWS_BESIDE_LOGITS, ROWS_BESIDE_SCORES = 1, 4
# CUDA context and cuBLAS workspace outside llama.cpp's buffers (kvlint assumption)
CONTEXT_BYTES = int(0.5 * GIB)


def compute_bytes(arch: ModelArch, s: EngineSettings, output_on_gpu: bool) -> tuple[int, str]:
    """The largest of the graph's phases for one ubatch, in F32: the output logits (n_vocab per token, when the
    output layer is on the GPU); without flash attention, KQ for every head and its mask over the cells a slot
    attends to (its own stream of n_ctx_seq cells since PR #14363, all n_ctx before: kv_streams); the FFN's gate
    and up. Each with the hidden-size rows that live beside it."""
    ub = int(s.extra["n_ubatch"])
    own_stream = s.extra["kv_streams"] and not s.extra["unified"]
    n_kv = int(s.extra["n_ctx_seq"]) if own_stream else int(s.extra["n_ctx"])
    row = arch.hidden_size * ub * 4
    n_ff = max(arch.intermediate_size, arch.moe_intermediate_size * max(1, arch.experts_per_token))
    phases = {
        "logits": arch.vocab_size * ub * 4 + ROWS_BESIDE_LOGITS * row if output_on_gpu else 0,
        "attention scores": 0
        if s.extra["flash_attn"]
        else (arch.query_heads + 1) * n_kv * ub * 4 + ROWS_BESIDE_SCORES * row,
        "FFN": 2 * n_ff * ub * 4 + row,
    }
    what = max(phases, key=lambda k: phases[k])
    return phases[what], f"kvlint's estimate: one ubatch of {ub} tokens, its largest phase the {what} (F32)"
