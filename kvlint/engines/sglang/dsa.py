"""SGLang's KV cell for DeepSeek-sparse-attention models (DeepSeek-V3.2, GLM-5), by release and GPU."""

from __future__ import annotations

from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec

# DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): SGLang's NSA/DSA pool keeps a second buffer per
# layer, the lightning indexer's keys in fp8 with one fp32 scale per 128 values, whatever
# --kv-cache-dtype is, and the cell profile_max_num_token divides by counts it
# (model_runner_kv_cache_mixin.py "Add indexer KV cache overhead for NSA models": index_head_dim +
# index_head_dim // 128 x 4 bytes of uint8 per layer; NSATokenToKVPool asserts index_head_dim == 128,
# the GLM-5 / V3.2 configs' value). Read in sglang 0.5.8.post1 and kept through 0.5.23
# (pool_configurator _compute_dsa_indexer_cell_size; v0.5.22 scales it by the decode-CP size); the rocm v0.5.8.post1 (20260218) GLM-5-FP8 log
# s-061 sized its pool with 78 x (576 + 132) B per token.
DSA_FAMILIES = ("deepseek_v32", "glm_moe_dsa")
DSA_INDEX_HEAD_DIM = 128
DSA_INDEXER_BYTES = DSA_INDEX_HEAD_DIM + DSA_INDEX_HEAD_DIM // 128 * 4


def dsa_indexer_bytes(arch: ModelArch) -> int:
    """Indexer bytes per token per layer SGLang adds to the cell (0 for every non-DSA model)."""
    return DSA_INDEXER_BYTES if arch.mla and arch.family in DSA_FAMILIES else 0


# Two more DSA rules, read in sglang 0.5.8.post1 (server_args), 0.5.17 and 0.5.23 (arg_groups/overrides.py
# _dsa_kv_cache_dtype_default / _dsa_split_backend_resolution, mem_cache/kv_cache_configurator.py
# calculate_mla_kv_cache_dim):
# - kv_cache_dtype auto becomes fp8_e4m3 on SM100 and newer ("Setting KV cache dtype to fp8_e4m3 for
#   DeepSeek DSA on SM10 device"), bfloat16 below (and on ROCm);
# - from 0.5.17 the cell uses the layout the pool allocates: an fp8 latent with one fp32 scale per 128
#   values and the rope part kept in bf16, 512 + 16 + 64 x 2 = 656 B, for the backends that read that
#   layout -- the defaults for fp8 below SM100 (flashmla_kv) and GLM on SM120 (flashinfer_sparse_mla);
#   trtllm (the SM100 default) and ROCm's kernels read the raw 576-byte latent. Up to 0.5.16 the cell
#   counted 576 B whatever the pool then allocated (s-061: 656 allocated, 576 sized).
DSA_SCALED_LAYOUT_FROM = (0, 5, 17)


def dsa_fp8_default(arch: ModelArch, gpu: GpuSpec | None) -> bool:
    """SGLang turns kv_cache_dtype auto into fp8_e4m3 for a DSA model on an SM100+ NVIDIA GPU."""
    cc = gpu.compute_capability if gpu is not None and gpu.vendor != "amd" else None
    return bool(dsa_indexer_bytes(arch)) and cc is not None and cc[0] >= 10


def dsa_latent_bytes(arch: ModelArch, gpu: GpuSpec | None, version: tuple[int, ...] | None, kv: str) -> int:
    """Bytes of the MLA latent per token per layer in a DSA model's cell, when it is not the plain
    (kv_lora_rank + qk_rope_head_dim) x dtype bytes (0 then)."""
    if not dsa_indexer_bytes(arch) or kv.lower() not in ("fp8", "fp8_e4m3"):
        return 0
    if (
        (version is not None and tuple(version) < DSA_SCALED_LAYOUT_FROM)
        or gpu is None
        or gpu.vendor == "amd"
    ):
        return 0
    cc = gpu.compute_capability
    if cc is None or (cc[0] >= 10 and not (cc[0] == 12 and arch.family == "glm_moe_dsa")):
        return 0
    rank = arch.kv_lora_rank or 512
    rope = arch.head_dim - rank
    return rank + rank // 128 * 4 + rope * 2
