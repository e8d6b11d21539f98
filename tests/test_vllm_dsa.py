"""vLLM's KV cache for DeepSeek sparse attention (kvlint/engines/vllm/dsa.py): the lightning
indexer's keys beside the MLA latent, by release, for any MLA config with index_topk."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kvlint.catalog import models
from kvlint.catalog.hf_config import ConfigError, parse_config
from kvlint.engines.vllm.dsa import FP8_DS_MLA_BYTES
from kvlint.resolve import Defaults, resolve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_cases import build_vllm  # noqa: E402

INDEXER = 128 + 128 // 128 * 4  # fp8 keys + one fp32 scale per 128 values


def _plan(model: str, gpu: str, version: str | None, kv: str | None = None, tp: int = 8):
    case = {"id": "t", "model": model, "gpu": gpu, "tensor_parallel_size": tp, "settings": {}}
    if kv:
        case["kv_cache_dtype"] = kv
    d, why = build_vllm(case, version)
    assert d is not None, why
    return resolve(d, Defaults()).plan


@pytest.mark.parametrize(
    ("version", "kv", "gpu", "latent"),
    [
        ("0.11.0", None, "H200", FP8_DS_MLA_BYTES),  # v0.11.0 turned auto into fp8_ds_mla
        ("0.12.0", None, "H200", 576 * 2),  # from v0.11.1 auto is the bf16 latent
        ("0.12.0", "fp8", "H200", FP8_DS_MLA_BYTES),
        ("0.19.0", "fp8", "H200", FP8_DS_MLA_BYTES),  # FLASHMLA_SPARSE on Hopper
        ("0.19.0", "fp8", "B200", 576),  # SM 10.x: FLASHINFER_MLA_SPARSE, plain fp8
    ],
)
def test_deepseek_v32_cell_is_latent_plus_indexer_keys(version, kv, gpu, latent):
    p = _plan("deepseek-ai/DeepSeek-V3.2", gpu, version, kv)
    assert p.kv_per_token == 61 * latent + 61 * INDEXER
    assert p.num_blocks == p.kv_pool // (p.block_size * p.kv_per_token)
    assert any("lightning indexer" in n for n in p.notes)


def test_no_indexer_before_v011_or_without_index_topk():
    assert _plan("deepseek-ai/DeepSeek-V3.2", "H200", "0.10.2").kv_per_token == 61 * 1152
    v3 = _plan("deepseek-ai/DeepSeek-V3", "H200", "0.12.0")
    assert v3.kv_per_token == 61 * 1152 and not any("indexer" in n for n in v3.notes)


def test_index_cache_layers_from_v024():
    """GLM-5.3 states index_topk_freq 4, index_skip_topk_offset 3: from v0.24.0 layers 0-2 and every
    fourth from 6 build an indexer (deepseek_v2.py `if self.is_v32 and (not _skip_topk or is_mtp_layer)`),
    21 of 78. v0.21-v0.23 read the IndexCache keys too, but only to skip the top-k selection: every layer
    still builds `Indexer` and its cache (vllm==0.23.0 deepseek_v2.py builds it before the IndexCache block)."""
    arch = models.resolve("zai-org/GLM-5.3-FP8").arch
    assert arch is not None and arch.dsa_index_rule[:2] == (4, 3)
    for version in ("0.24.0", "0.33.0"):
        assert _plan("zai-org/GLM-5.3-FP8", "B200", version).kv_per_token == 78 * 1152 + 21 * INDEXER
    for version in ("0.20.0", "0.22.0", "0.23.0"):
        assert _plan("zai-org/GLM-5.3-FP8", "B200", version).kv_per_token == 78 * 1152 + 78 * INDEXER


def test_indexer_keys_parse_from_any_config():
    base = {
        "architectures": ["DeepseekV32ForCausalLM"],
        "model_type": "deepseek_v32",
        "num_hidden_layers": 4,
        "hidden_size": 1024,
        "num_attention_heads": 8,
        "vocab_size": 1000,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "max_position_embeddings": 4096,
    }
    plain = parse_config(dict(base), "x", "test")
    assert plain.dsa_index_head_dim == 0
    dsa = parse_config(dict(base, index_topk=2048, index_topk_pattern=["F", "S", "S", "F"]), "x", "test")
    assert dsa.dsa_index_head_dim == 128 and dsa.dsa_index_rule == (1, 2, "FSSF")
    # a value vLLM's arithmetic cannot use is a config problem by name (bounds._DSA_KEYS), not vLLM's default
    for key, value in (("index_head_dim", "big"), ("index_topk_freq", 0), ("index_skip_topk_offset", [2])):
        with pytest.raises(ConfigError, match=key):
            parse_config(dict(base, index_topk=2048, **{key: value}), "x", "test")
