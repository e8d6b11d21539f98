"""The decoder's layer buffers on TensorRT-LLM's engine-build path: what the C++ executor's decoder allocates for
its max_batch_size before the KV cache manager reads free memory, beside the decoder state compute.py counts.

Read from NVIDIA/TensorRT-LLM, named by function; the commit is the stored file version read, named where the code
index gave one (it holds no file at the commit 0.19.0 pins, c6f7d42, the tensorrtllm_backend v0.19.0 submodule; the
sizes below are the same in every stored version found, 2024 and 2025 code):
- runtime/gptDecoder.cpp @0165bd7 GptDecoder::GptDecoder: a DynamicDecodeLayer<T> for the decoding mode over a
  DecoderDomain(maxBatchSize, maxBeamWidth, vocabSize, vocabSizePadded), then
  `DecodingLayerWorkspace(mManager, decodingDomain, TRTDataType<T>::value, mDynamicDecodeLayer->getWorkspaceSize())`;
  T is the engine's logits type (trtGptModelInflightBatching.cpp createDecoder, compute.LOGITS_BYTES).
- runtime/decodingLayerWorkspace.cpp @1a43c7d DecodingLayerWorkspace::DecodingLayerWorkspace: `mRuntimeLogitsDevice`
  [batch, maxDecodingTokens, beam, vocabSizePadded] of T (the penalised logits the sampling layers read) and
  `mWorkspaceDeviceBuffer(mBufferManager->gpu(workspaceBufferSizeInBytes))`, the one scratch buffer all layers share.
- layers/layersFactory.h @20709ce createDecodingLayerTypes: the penalty layer first, ban words, the decoding layer,
  stop criteria; DynamicDecodeLayer::getWorkspaceSize is the largest of theirs (a max, not a sum).
- layers/samplingLayer.cpp @0396172 SamplingLayer::SamplingLayer / allocateBuffer: a TopKSamplingLayer and a
  TopPSamplingLayer(decoderDomain, mBufferManager, /* deterministic */ true) for the default TopKTopP mode, its
  workspace the larger of the two; layers/topPSamplingLayer.h declares `bool isAirTopP = true`, so top-p runs the
  AIR radix select (getAirTopPWorkspaceSize), not the sorted path with cub::DeviceSegmentedRadixSort.
- kernels/samplingTopKKernels.h @0396172 getTopKWorkspaceSizes: `sizeof(T) * batchSize * maxTokensPerStep *
  vocabSizePadded` (the log-probs copy) and two `batchSize * maxTokensPerStep * maxTopK * maxBlockPerBeam` arrays
  (int ids, T values) with `maxBlockPerBeam = 8` and `TOP_K_MAX = 1024` (topKSamplingLayer asks for TOP_K_MAX);
  getTopKWorkspaceSize = common/memoryUtils calcAlignedSize(sizes, 256): each size rounded up to 256 bytes, plus 255.
- kernels/samplingAirTopPKernels.cu getAirTopPWorkspaceSizes: per row two (T + int) buffers of calcBufLen(vocab) =
  vocab / ((2 + 2 * sizeof(int) / sizeof(T)) * 8) rounded up to 256, and 2,048-bucket histograms - for float about
  vocab / 2 + 24 KiB a row against top-k's 4 x vocab + 64 KiB, so top-k's is the shared buffer's size; the sorted
  top-p path and its cub temp storage are not built by the default mode, so nothing of cub is counted.
- layers/penaltyLayer.cpp (BufferManager version) PenaltyLayer::allocateWorkspace, called from initialize() when the
  mode is not Auto (the C++ executor resolves Auto first): with occurrence penalties, which
  executor/types.h DecodingMode::TopKTopP() carries (kUsePenalties), `mBufferManager->gpu(batchSize *
  maxDecodingTokens * beamWidth * vocabSize, kINT32)`, and the same again for beam search's previous step.
- batch_manager/kvCacheManager.cpp: the free memory read is `freeMem + bufferManager.memoryPoolFree()`, so only what
  is held when the KV cache is sized counts; these buffers are held for the executor's life.
Not counted: the per-slot [max_batch_size] parameter arrays and curand states (a few hundred bytes a slot), and on
beam search (max_beam_width > 1) the beam-search layer's own workspace, which replaces the sampling layer's (its
size is chosen per kernel variant in BeamSearchLayer::configureBeamSearchLayer).
A check outside the calibration set: with compute.engine_buffer_bytes' decoder state this gives 5.76 GiB for the
"Allocated 5.76 GB GPU memory for decoder" of NVIDIA/TensorRT-LLM issue 1188 (comment of 2024-11-21,
Qwen2.5-Coder-0.5B, taken at trtllm-build's default max_batch_size 2048 and its 32,768-token max_seq_len, which the
comment does not state).
"""

from __future__ import annotations

from kvlint.capacity.kv import cdiv
from kvlint.capacity.plan import EngineSettings
from kvlint.catalog.arch import ModelArch
from kvlint.engines.trtllm.compute import LOGITS_BYTES, vocab_padded

TOP_K_MAX = 1024  # samplingTopKKernels.h `static constexpr runtime::SizeType32 TOP_K_MAX = 1024`
TOPK_BLOCKS_PER_BEAM = 8  # samplingTopKKernels.h getTopKWorkspaceSizes `maxBlockPerBeam = 8`
ALIGN = 256  # memoryUtils.h calcAlignedSize(sizes, ALIGN_BYTES = 256)
PENALTY_BYTES = 4  # penaltyLayer.cpp allocateWorkspace: nvinfer1::DataType::kINT32 occurrence counts


def aligned(sizes: list[int]) -> int:
    """calcAlignedSize: each buffer rounded up to 256 bytes, and 255 more to align the base pointer."""
    return sum(cdiv(size, ALIGN) * ALIGN for size in sizes) + ALIGN - 1


def topk_workspace(batch: int, vocab: int, value_bytes: int = LOGITS_BYTES) -> int:
    """getTopKWorkspaceSize(batch, 1, TOP_K_MAX, vocab) of the logits type: the log-probs copy, then the per-block
    candidate ids (int32) and values."""
    candidates = batch * TOP_K_MAX * TOPK_BLOCKS_PER_BEAM
    return aligned([value_bytes * batch * vocab, 4 * candidates, value_bytes * candidates])


def sampling_workspace_bytes(arch: ModelArch, s: EngineSettings) -> tuple[int, str]:
    """The decoder layers' buffers for max_batch_size slots, sized when the executor creates its decoder: the
    workspace's copy of the logits, the shared scratch buffer (top-k's, the largest layer's), and the penalty
    layer's occurrence counts over the unpadded vocabulary (twice with beam search)."""
    batch = max(1, s.max_num_seqs)
    beam = max(1, int(s.extra.get("beam") or 1))
    vocab = vocab_padded(arch, s.tp * s.pp)
    logits = batch * beam * vocab * LOGITS_BYTES
    scratch = topk_workspace(batch, vocab) if beam == 1 else 0
    penalty = batch * beam * arch.vocab_size * PENALTY_BYTES * (2 if beam > 1 else 1)
    held = "top-k's workspace" if beam == 1 else "no sampling workspace (beam search's is not counted)"
    why = (
        f"the decoder's layers for {batch:,} slots x {vocab:,} tokens of vocabulary: the workspace's logits copy,"
        f" {held} and the penalty layer's occurrence counts"
    )
    return logits + scratch + penalty, f"from the source: {why}"
