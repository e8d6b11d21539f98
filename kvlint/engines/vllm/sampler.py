"""The V1 profile run's sampler warm-up, by the top-k/top-p path the release takes.

vLLM V1's profile_run ends with `_dummy_sampler_run`: logits for min(max_num_seqs,
max_num_batched_tokens) rows over the whole vocabulary, sampled with top_k = vocab - 1 and
top_p = 0.9 (vllm/v1/worker/gpu_model_runner.py, v0.10.1.1 l.2426-2458, the same in v0.19.0
l.5556-5594), so the peak depends on which top-k/top-p implementation runs
(vllm/v1/sample/ops/topk_topp_sampler.py, read in each release's wheel):

- up to v0.11.0 FlashInfer's kernel runs when the package is installed
  (`VLLM_USE_FLASHINFER_SAMPLER is not False`, vllm PR #11394). The vllm/vllm-openai image installs
  it (vllm-project/vllm@0000977:docker/Dockerfile, vllm-base stage, skipped on arm64); a pip install
  does not (v0.10.1.1 METADATA: `flashinfer-python==0.2.11; extra == "flashinfer"`), and then
  `apply_top_k_top_p` sorts the logits in PyTorch;
- v0.11.1 to v0.16: the FlashInfer sampler is opt-in (`if envs.VLLM_USE_FLASHINFER_SAMPLER:`,
  vllm PR #26859) although FlashInfer is now a dependency, so every install sorts;
- from v0.17.0 a Triton kernel masks batches of 8 rows or more (`apply_top_k_top_p_triton`,
  vllm PR #33538); from v0.21.0 FlashInfer is the default again (vllm PR #40376), and the warm-up
  samples a second time with a generator, which forward_cuda sends to forward_native
  (vllm==0.21.0:vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run, v1/sample/ops/topk_topp_sampler.py
  forward_cuda): under 8 rows that pass sorts in PyTorch whatever the flag says (the sampler_warmup row
  of data/releases.json).

The fused paths (FlashInfer, Triton) hold the bf16 logits, an fp32 copy, the probabilities and
the exponential noise: SAMPLER_BYTES_PER_LOGIT, fitted on the v0.19 logs (vllm.py). The PyTorch
path's peak is inside `logits.sort()` (torch aten/src/ATen/native/cuda/SortStable.cu, pytorch/pytorch
@061531e): with 128 rows or more `segmented_sort_pairs` allocates int64 reverse indices beside the
sorted fp32 values and int64 indices it returns, and CUB's segmented radix sort takes alternate key
and value buffers as temporary storage (NVIDIA/cub@050f9e0 cub/device/dispatch/dispatch_radix_sort.cuh,
DispatchSegmentedRadixSort: "bytes needed for 3rd keys buffer" / "3rd values buffer"):
2 (bf16 logits) + 4 (fp32 logits) + 4 + 8 (sorted values, indices) + 8 (reverse indices)
+ 4 + 8 (alternate keys, values) = 38 bytes a logit. Under 128 rows `segmented_sort_pairs_by_full_sort`
sorts (value, int2 index-and-segment) pairs instead: 2 + 4 + 4 + 8 + 8 + 8 (two int2 buffers)
+ 4 (keys out) + 4 + 8 (alternate keys, int2 values) = 50.
Checked against two logs no constant was read off: gpt-oss-120b on one H100 PCIe, pip-installed
v0.10.1.1 (vllm issue #23278, 'Available KV cache memory: -2.14 GiB'), and Qwen3-235B-A22B-FP8 at
TP 4 on main of 2025-07-22 (vllm PR #21429: 'torch peak memory increase: 5.62GiB'; 5.59 modelled).

The fused-MoE intermediate caches: up to v0.10 every call allocates and frees them
(fused_moe.py / fused_marlin_moe.py `torch.empty`), so they are gone when the sampler runs; from
v0.11.0 the modular kernel keeps them in buffers shared across layers
(FusedMoEModularKernel.shared_buffers, v0.13.0 the v1 worker's workspace manager), which stay
allocated through the sampler run (the v0.19 fit adds them to it).
"""

from __future__ import annotations

from kvlint.engines.vllm.versions import lookup, parse_version

FUSED = "fused"  # FlashInfer or Triton top-k/top-p
SORT = "sort"  # PyTorch sort-based top-k/top-p
SORT_BYTES_PER_LOGIT = 2 + 4 + 4 + 8 + 8 + 4 + 8  # 38, 128 rows or more
SORT_FEW_ROWS_BYTES_PER_LOGIT = 2 + 4 + 4 + 8 + 8 + 8 + 4 + 4 + 8  # 50, under 128 rows
SEGMENTED_ROWS = 128  # SortStable.cu: nsegments < 128 sorts by one full sort

ENV = "VLLM_USE_FLASHINFER_SAMPLER"


def _flag(extra: dict) -> bool | None:
    """VLLM_USE_FLASHINFER_SAMPLER as vllm/envs.py reads it (int(...) != 0), None when unset or unreadable."""
    raw = extra.get(ENV)
    if raw is None:
        return None
    try:
        return bool(int(str(raw).strip()))
    except ValueError:
        return None


def sampler_path(version_text: str | None, extra: dict, rows: int) -> tuple[str, str]:
    """(FUSED | SORT, why) for the profile run's sampler of `rows` rows."""
    version = parse_version(version_text)
    flag = _flag(extra)
    if version is None or version >= (0, 17):
        if rows < 8 and lookup("sampler_warmup", version).value == "two passes":
            return SORT, (
                "PyTorch sort: the warm-up's second pass, with a generator, runs forward_native, where the"
                " Triton kernel takes 8 rows or more"
            )
        if rows < 8 and flag is not True:
            return SORT, "PyTorch sort (the Triton kernel takes 8 rows or more)"
        return FUSED, "Triton/FlashInfer top-k/top-p"
    if version >= (0, 11, 1):
        if flag:
            return FUSED, f"FlashInfer top-k/top-p ({ENV}=1)"
        return SORT, f"PyTorch sort: v0.11.1-v0.16 use FlashInfer's sampler only with {ENV}=1"
    if flag is False:
        return SORT, f"PyTorch sort ({ENV}=0)"
    return FUSED, "FlashInfer top-k/top-p (installed in the vllm/vllm-openai image)"


def sort_bytes_per_logit(rows: int) -> int:
    return SORT_BYTES_PER_LOGIT if rows >= SEGMENTED_ROWS else SORT_FEW_ROWS_BYTES_PER_LOGIT


def moe_caches_persist(version_text: str | None) -> bool:
    """Whether the fused-MoE caches are still allocated when the sampler runs (v0.11.0 on)."""
    version = parse_version(version_text)
    return version is None or version >= (0, 11)
