"""vLLM V0 before v0.6.4: the profile run's peak as the drop in free device memory.

Up to v0.6.3, V0's worker took the peak from the device, not from PyTorch's counters
(vllm/worker/worker.py profile_num_available_blocks at v0.3.3, vllm-project/vllm@82091b8, line 132:
`peak_memory = self.init_gpu_memory - free_gpu_memory`, after `profile_run()` and without emptying
the cache). Free device memory does not come back when a tensor dies: PyTorch's caching allocator
keeps the segment reserved. vLLM PR #9352 replaced this by `torch.cuda.memory_stats()`'s allocated
peak because the device figure followed the allocator's segments, not the tensors (its description:
the same profile "vastly overestimates peak memory" when no segment is released).

So the peak is the sum of the segments the profile forward reserves, not the most bytes alive at
once. In the decoder layer of that era (vllm/model_executor/models/llama.py LlamaDecoderLayer at
v0.3.3: input norm, fused qkv_proj, attention, o_proj, fused add-norm, gate_up_proj, SiluAndMul,
down_proj), the first layer's forward asks the allocator for, in order, with T batched tokens:
    embedding output (H, the residual from then on), first input-norm output (H),
    qkv (q + 2 kv heads x head_dim / TP), attention output (H / TP), o_proj output (H),
    gate_up (2 I / TP), SiluAndMul output (I / TP), down_proj output (H).
When gate_up and the activation are asked for, only the smaller qkv / norm / attention blocks are
cached, so each gets a segment of its own (CUDACachingAllocator hands out a cached block only if it is
at least the size asked); down_proj's output fits the freed norm block. Every later layer asks for the
same sizes again and is served from those segments. (The fused add-norm works in place; xformers
0.0.23.post1's flash path folds vLLM's expanded GQA keys/values as strided views, `fold` in
xformers/ops/fmha/flash.py, so no K/V copy is made.) The segments: T x (3 H + H / TP + qkv + 3 I / TP),
against the allocated peak T x (3 H + 3 I / TP) kvlint prices from v0.6.4 on.
"""

from __future__ import annotations

from kvlint.catalog.arch import ModelArch


def reserved_forward_bytes(arch: ModelArch, t: int, tp: int, act_bytes: float) -> int:
    """Segments the V0 profile forward of `t` tokens leaves reserved (see the module docstring)."""
    h = arch.hidden_size
    qkv = (arch.query_heads + 2 * arch.kv_heads) * arch.head_dim // tp
    return int(t * (3 * h + h // tp + qkv + 3 * arch.intermediate_size // tp) * act_bytes)


__all__ = ["reserved_forward_bytes"]
