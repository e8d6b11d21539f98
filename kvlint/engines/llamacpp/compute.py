"""The compute buffer llama.cpp's scheduler reserves for one ubatch (`llama_context: CUDA0 compute buffer size`),
and the memory outside its buffers: both kvlint's estimates, said so in the plan (plan.py has the rest)."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.units import GIB

COMPUTE_HIDDEN = 3  # hidden-size F32 activations beside the largest tensor (kvlint assumption)
# CUDA context and cuBLAS workspace outside llama.cpp's buffers (kvlint assumption)
CONTEXT_BYTES = int(0.5 * GIB)


def compute_bytes(arch: ModelArch, s: EngineSettings, output_on_gpu: bool) -> tuple[int, str]:
    """The compute buffer: the largest ubatch-wide tensor of the graph and a few hidden-size rows, in F32."""
    ub = int(s.extra["n_ubatch"])
    n_kv = int(s.extra["n_ctx"]) if s.extra["unified"] else int(s.extra["n_ctx_seq"])
    logits = arch.vocab_size * ub * 4 if output_on_gpu else 0
    scores = 0 if s.extra["flash_attn"] else arch.query_heads * n_kv * ub * 4
    ffn = (
        2 * max(arch.intermediate_size, arch.moe_intermediate_size * max(1, arch.experts_per_token)) * ub * 4
    )
    largest = max(logits, scores, ffn)
    total = largest + COMPUTE_HIDDEN * arch.hidden_size * ub * 4
    what = "logits" if largest == logits else "attention scores" if largest == scores else "FFN"
    return total, f"kvlint's estimate: one ubatch of {ub} tokens, its largest tensor the {what} (F32)"
