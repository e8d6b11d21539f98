"""The two terms before the KV cache that kvlint estimates: on the PyTorch backend, the estimation run's
activations of a max_num_tokens forward pass and the memory outside torch (CUDA context, NCCL, CUDA graphs); on
the engine-build path (`--backend trt`, a TensorRT engine run by the C++ executor), the engine's execution
context, sized when the engine was built for max_num_tokens, and the CUDA context with the runtime's and
decoder's buffers. fit.py has the rest."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.units import GIB

CONTEXT_BYTES = int(1.0 * GIB)  # CUDA context, cuBLAS/cuDNN workspaces, CUDA graphs (kvlint assumption)
NCCL_BYTES = int(0.5 * GIB)  # NCCL buffers with more than one rank (kvlint assumption)
# trtllm-serve --backend values that build and run a TensorRT engine (tensorrt_llm/commands/serve.py get_llm_args:
# "trt" selects the TensorRT flow of the LLM API, not the PyTorch executor)
ENGINE_BACKENDS = ("trt", "tensorrt")


def engine_path(s: EngineSettings) -> bool:
    """The launch runs a TensorRT engine (the C++ executor), not the PyTorch backend's estimation run."""
    return str(s.extra.get("backend") or "").lower() in ENGINE_BACKENDS


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
    if engine_path(s):
        why = f"the engine's execution context, taken as a forward pass of max_num_tokens {n:,} (set at its build)"
    else:
        why = f"a forward pass of max_num_tokens {n:,} (the estimation run)"
    return n * per_token * 2, f"kvlint's estimate: {why}"


def outside_torch_bytes(s: EngineSettings) -> tuple[int, str]:
    nccl = NCCL_BYTES if s.tp * s.pp > 1 else 0
    held = "CUDA context, runtime and decoder buffers" if engine_path(s) else "CUDA context, CUDA graphs"
    return CONTEXT_BYTES + nccl, f"kvlint's estimate: {held}" + (" and NCCL" if nccl else "")
