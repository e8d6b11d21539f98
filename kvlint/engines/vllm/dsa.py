"""vLLM's KV cache for DeepSeek sparse attention (DeepSeek-V3.2, GLM-5: any MLA config with index_topk).

Read in the vllm wheels 0.11.0 ... 0.22.0 and 0.33.0 (the indexer-skip boundary in every release 0.20.0 ... 0.33.0):
- each attention layer that builds the lightning indexer adds a `DeepseekV32IndexerCache` beside the MLA
  latent: fp8 keys with one fp32 scale per 128 values, head_dim = index_head_dim +
  index_head_dim // 128 * 4 = 132 bytes a token, dtype uint8, one head, not split by TP
  (model_executor/models/deepseek_v2.py `Indexer.k_cache`, its `MLAAttentionSpec`). It joins the MLA
  layers' KV cache group as a `UniformTypeKVCacheSpecs` whose page is the sum of every layer's page
  (v1/kv_cache_interface.py), so a block costs latent x layers + 132 x indexer layers;
- up to v0.23 every layer builds an indexer (v0.21-v0.23 read the IndexCache keys only to skip the
  top-k selection, after `self.indexer = Indexer(...)`); from v0.24.0 a layer the IndexCache config skips
  builds none (`if self.is_v32 and (not _skip_topk or is_mtp_layer)`): layer i skips unless
  max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0, or per index_topk_pattern ('S' skips)
  (vllm==0.24.0:vllm/model_executor/models/deepseek_v2.py, "IndexCache config");
- the latent: `--kv-cache-dtype fp8` becomes DeepSeek's fp8_ds_mla layout, 656 bytes a token (512 fp8
  values, 4 fp32 scales, 64 bf16 rope values; kv_cache_interface.py `MLAAttentionSpec.page_size_bytes`).
  v0.11.0 did so for `auto` too (models/config.py DeepseekV32ForCausalLM.verify_and_update_config:
  `cache_dtype == "auto" or ... startswith("fp8")`); v0.11.1-v0.17 only for fp8; from v0.18 only where
  the FLASHMLA_SPARSE backend runs (layers/attention/mla_attention.py), which SM 10.x passes over for
  FLASHINFER_MLA_SPARSE with an fp8 cache (platforms/cuda.py `_get_backend_priorities`): plain fp8 there;
- vLLM runs these models from v0.11.0 (DeepseekV32ForCausalLM; GlmMoeDsaForCausalLM from v0.16).
Not modelled: GLM-5's fp8 default on SM 10.x (a release after v0.22), MTP layers' indexers (loaded only
for MTP speculative decoding), the forced block size 64 (a rounding of at most 63 tokens).
"""

from __future__ import annotations

from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.vllm.versions import parse_version
from kvlint.record import record

FP8_DS_MLA_BYTES = 656  # 512 fp8 + 4 x 4 scale + 64 x 2 rope bytes per token per layer
QUANT_BLOCK = 128  # Indexer.quant_block_size
INDEX_CACHE_SKIPS = (0, 24, 0)  # first release where a skipped layer builds no indexer (0.23.0 builds all)


@record(frozen=True)
class DsaCache:
    latent_bytes: int | None  # per token per layer when the layout differs from the plain dtype
    indexer_bytes: int  # per token per indexer layer
    indexer_layers: tuple[int, ...]  # model layer indices that build an indexer
    note: str

    def indexer_bytes_for(self, first: int, count: int) -> int:
        """Indexer bytes per token for the model layers first .. first + count - 1 (one pipeline stage)."""
        return self.indexer_bytes * sum(1 for i in self.indexer_layers if first <= i < first + count)


def _indexer_layers(arch: ModelArch, version: tuple[int, ...] | None) -> tuple[int, ...]:
    freq, offset, pattern = arch.dsa_index_rule
    if version is not None and version < INDEX_CACHE_SKIPS:
        return tuple(range(arch.layers))  # every layer builds one before v0.24.0
    if pattern:
        return tuple(i for i in range(arch.layers) if not (i < len(pattern) and pattern[i] == "S"))
    return tuple(i for i in range(arch.layers) if max(i - offset + 1, 0) % freq == 0)


def _latent(kv_dtype: str, version: tuple[int, ...] | None, gpu: GpuSpec | None) -> int | None:
    fp8 = kv_dtype.startswith("fp8")
    if version is not None and version < (0, 11, 1):
        return FP8_DS_MLA_BYTES if fp8 or kv_dtype == "auto" else None
    cc = gpu.compute_capability if gpu is not None else None
    flashinfer_sparse = (version is None or version >= (0, 18)) and cc is not None and cc[0] == 10
    return FP8_DS_MLA_BYTES if fp8 and not flashinfer_sparse else None


def cache(arch: ModelArch, version_text: str | None, kv_dtype: str, gpu: GpuSpec | None) -> DsaCache | None:
    """vLLM's DSA cache layout for `arch`, None for a model without an indexer or a release without DSA."""
    if not arch.mla or not arch.dsa_index_head_dim:
        return None
    version = parse_version(version_text)
    if version is not None and version < (0, 11):
        return None
    d = arch.dsa_index_head_dim
    per = d + d // QUANT_BLOCK * 4
    layers = _indexer_layers(arch, version)
    latent = _latent(kv_dtype, version, gpu)
    where = "all" if len(layers) == arch.layers else f"{len(layers)} of {arch.layers}"
    lat = f"; the latent in DeepSeek's fp8_ds_mla layout, {latent} B" if latent else ""
    note = (
        f"DeepSeek sparse attention: vLLM keeps the lightning indexer's keys beside the MLA latent, {per} B "
        f"a token ({d} fp8 + fp32 scales) on {where} layers{lat}"
    )
    return DsaCache(latent, per, layers, note)
