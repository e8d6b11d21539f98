"""The terms before the KV cache that kvlint estimates: on the PyTorch backend, the estimation run's
activations of a max_num_tokens forward pass and the memory outside torch (CUDA context, NCCL, CUDA graphs); on
the engine-build path (`--backend trt`, a TensorRT engine run by the C++ executor), the engine's execution
context, sized when the engine was built for max_num_tokens, the CUDA context, and the runtime and decoder
buffers the executor allocates for its batch and length limits before it measures free memory
(`engine_buffer_bytes`, from the source). fit.py has the rest."""

from __future__ import annotations

from kvlint.capacity.kv import cdiv
from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.units import GIB

CONTEXT_BYTES = int(1.0 * GIB)  # CUDA context, cuBLAS/cuDNN workspaces, CUDA graphs (kvlint assumption)
NCCL_BYTES = int(0.5 * GIB)  # NCCL buffers with more than one rank (kvlint assumption)
# trtllm-serve --backend values that build and run a TensorRT engine (tensorrt_llm/commands/serve.py get_llm_args:
# "trt" selects the TensorRT flow of the LLM API, not the PyTorch executor)
ENGINE_BACKENDS = ("trt", "tensorrt")
# The engine's "logits" output is float32 unless the build says otherwise: tensorrt_llm/models/modeling_utils.py
# PretrainedConfig.__init__ `logits_dtype: str = 'float32'` (trtllm-build --logits_dtype overrides it). The decoder
# runs in the same type (cpp/tensorrt_llm/batch_manager/trtGptModelInflightBatching.cpp createDecoder:
# `decoderType = mRuntime->getEngine().getTensorDataType("logits")`).
LOGITS_BYTES = 4
# DecoderState's per-slot [max_batch_size, beam, max_seq_len] arrays, 4 bytes each: output ids and parent ids
# (int32), log probs and their tiled copy (float) (cpp/tensorrt_llm/runtime/decoderState.cpp reshapeBuffers:
# ids, parentIds, logProbs on maxTotalTokensShape; logProbsTiled on {maxSequenceLength, maxBatchSize, maxBeamWidth})
SLOT_ARRAYS = 4


def engine_path(s: EngineSettings) -> bool:
    """The launch runs a TensorRT engine (the C++ executor), not the PyTorch backend's estimation run."""
    return str(s.extra.get("backend") or "").lower() in ENGINE_BACKENDS


def vocab_padded(arch: ModelArch, world: int) -> int:
    """The vocabulary rounded up to a multiple of the ranks (cpp/tensorrt_llm/runtime/modelConfig.h
    getVocabSizePadded(worldSize): `(mVocabSize + worldSize - 1) / worldSize * worldSize`)."""
    return cdiv(arch.vocab_size, max(1, world)) * max(1, world)


def engine_buffer_bytes(arch: ModelArch, s: EngineSettings) -> tuple[int, str]:
    """What the C++ executor allocates for its limits before the KV cache manager reads free memory
    (trtGptModelInflightBatching.cpp: createBuffers, "Allocated ... GPU memory for runtime buffers", then
    createDecoder, "... for decoder", then createKvCacheManager): the logits buffer of max_batch_size x beam rows
    of the padded vocabulary (cpp/tensorrt_llm/batch_manager/runtimeBuffers.cpp setMaxBufferSizes `numLogits =
    maxBatchSize * std::max(1 + maxDraftTokens, maxBeamWidth)`, reshape `logits [numLogits, vocabSizePadded]`);
    the decoder state's four per-slot arrays of max_seq_len and its embedding bias [max_batch_size,
    vocabSizePadded] in the decoder's type (decoderState.cpp reshapeBuffers). The decoder's layers (sampling
    workspace, penalty counts) are sampling.sampling_workspace_bytes, a term of their own."""
    beam = max(1, int(s.extra.get("beam") or 1))
    rows = max(1, s.max_num_seqs) * beam
    vocab = vocab_padded(arch, s.tp * s.pp)
    logits = rows * vocab * LOGITS_BYTES
    state = rows * s.max_model_len * SLOT_ARRAYS * 4 + max(1, s.max_num_seqs) * vocab * LOGITS_BYTES
    why = (
        f"logits for {rows:,} sequence slots x {vocab:,} tokens of vocabulary (float32) and the decoder's"
        f" per-sequence arrays of max_seq_len {s.max_model_len:,}"
    )
    return logits + state, f"from the source: {why}"


def engine_window(blocks: int, block: int, beam: int, s: EngineSettings) -> int:
    """The length the C++ executor starts with when one sequence of max_seq_len needs more blocks than the pool
    has (trtGptModelInflightBatching.cpp clampWindowSizesToFitAtLeastOneSequence, "maxSequenceLen is reduced to
    maxAttentionWindow: N"): kvCacheManager.cpp calculateMaxAttentionWindow, with the prompt at the executor's
    maxInputLen and the rest of max_seq_len as output. When the output's own blocks exceed the pool, whole blocks
    per beam; otherwise the output plus the blocks left, in tokens, at most max_seq_len. maxInputLen is
    max_seq_len - 1 with chunked context, else min(max_seq_len - 1, max_num_tokens) (the executor's
    "TRTGptModel maxInputLen: 4097 = maxSequenceLen - 1 since chunked context is enabled" and "... = min(
    maxSequenceLen - 1, maxNumTokens) since context FMHA and usePackedInput are enabled", trtllm-build's
    defaults)."""
    length = s.max_model_len
    prompt = length - 1 if s.chunked_prefill else min(length - 1, s.max_batched_tokens)
    output = length - prompt
    output_blocks = cdiv(output, block) * beam
    if output_blocks > blocks:
        return blocks // beam * block
    return min(output + (blocks - output_blocks) * block, length)


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
    held = "CUDA context and cuBLAS workspace" if engine_path(s) else "CUDA context, CUDA graphs"
    return CONTEXT_BYTES + nccl, f"kvlint's estimate: {held}" + (" and NCCL" if nccl else "")
