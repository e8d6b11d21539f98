"""The two terms of TensorRT-LLM's estimation run kvlint estimates: the activations of a max_num_tokens
forward pass and the memory outside torch (CUDA context, NCCL, CUDA graphs). fit.py has the rest."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.units import GIB

CONTEXT_BYTES = int(1.0 * GIB)  # CUDA context, cuBLAS/cuDNN workspaces, CUDA graphs (kvlint assumption)
NCCL_BYTES = int(0.5 * GIB)  # NCCL buffers with more than one rank (kvlint assumption)


def activation_bytes(arch: ModelArch, s: EngineSettings) -> tuple[int, str]:
    """The estimation run's dummy context requests fill max_num_tokens (_util.py _create_dummy_context_requests):
    one layer's live tensors for that many tokens, 2 bytes each: the residual and the normed hidden state
    beside the larger of the fused QKV output and the MLP's gate/up with its product (kvlint's estimate)."""
    n = s.max_batched_tokens
    tp = max(1, s.tp)
    qkv = (arch.query_heads + 2 * arch.kv_heads) * arch.head_dim // tp
    inter = max(arch.intermediate_size, arch.moe_intermediate_size * max(1, arch.experts_per_token))
    mlp = 3 * inter // tp
    per_token = 2 * arch.hidden_size + max(qkv, mlp)
    return (
        n * per_token * 2,
        f"kvlint's estimate: a forward pass of max_num_tokens {n:,} (the estimation run)",
    )


def outside_torch_bytes(s: EngineSettings) -> tuple[int, str]:
    nccl = NCCL_BYTES if s.tp * s.pp > 1 else 0
    return CONTEXT_BYTES + nccl, "kvlint's estimate: CUDA context, CUDA graphs" + (
        " and NCCL" if nccl else ""
    )
