"""Classic GPT-style decoders and remote-code configs: parameters and KV per token against published figures.

Parameter totals are the exact counts their authors published:
- GPT-NeoX-20B: 20,554,567,680 (Black et al. 2022, "GPT-NeoX-20B", Table 1 / model card).
- Pythia-12B: 11,846,072,320 and Pythia-70M: 70,426,624 (Biderman et al. 2023, Pythia, Table 1).
- BLOOM: 176,247,271,424 (bigscience/bloom model card, "Parameters").
- GPT-2 XL: 1,557,611,200 (the 1.5B model; Radford et al. 2019 count incl. learned positions).
These need every linear bias, LayerNorm bias and learned position table counted, as vLLM loads them.
KV per token follows vLLM ModelConfig.get_total_num_kv_heads: `multi_query` means one KV head.
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of


def _kv_bytes_bf16(arch) -> int:
    return 2 * arch.kv_heads * arch.head_dim * arch.attention_layers * 2


@pytest.mark.parametrize(
    ("model_id", "params"),
    [
        ("EleutherAI/gpt-neox-20b", 20_554_567_680),
        ("EleutherAI/pythia-12b", 11_846_072_320),
        ("EleutherAI/pythia-70m", 70_426_624),
        ("bigscience/bloom", 176_247_271_424),
        ("gpt2-xl", 1_557_611_200),
    ],
)
def test_published_parameter_counts(model_id, params):
    assert arch_of(model_id).params == params


def test_pre_transformers_falcon_configs_read_as_vllm_reads_them():
    # tiiuae/falcon-7b (model_type RefinedWebModel): multi-query, one KV head of 64 over 32 layers.
    f7 = arch_of("tiiuae/falcon-7b")
    assert (f7.family, f7.kv_heads, f7.head_dim, f7.layers) == ("falcon", 1, 64, 32)
    assert _kv_bytes_bf16(f7) == 8192
    assert abs(f7.params / 1e9 - 6.92) < 0.01  # model card: 6.9B (tied embedding)
    # tiiuae/falcon-40b (RefinedWeb): new decoder architecture, n_head_kv 8 (RWConfig hidden 8192 rule).
    f40 = arch_of("tiiuae/falcon-40b")
    assert (f40.kv_heads, f40.layers) == (8, 60) and _kv_bytes_bf16(f40) == 2 * 8 * 64 * 60 * 2
    assert abs(f40.params / 1e9 - 41.3) < 0.05  # 41.8B on the Hub counts the tied lm_head twice


def test_gpt_bigcode_multi_query_has_one_kv_head():
    # StarCoder-based StarChat: 15.5B (StarCoder paper), MQA with head 128 over 40 layers.
    arch = arch_of("HuggingFaceH4/starchat-beta")
    assert arch.kv_heads == 1 and _kv_bytes_bf16(arch) == 2 * 128 * 40 * 2
    assert abs(arch.params / 1e9 - 15.5) < 0.05


def test_glm4_mlp_from_ffn_hidden_size_and_cohere_ties_embeddings():
    # THUDM/glm-4-9b: 9.4B (model card); MLP width is ffn_hidden_size 13696, not 4 x hidden.
    glm = arch_of("THUDM/glm-4-9b")
    assert glm.intermediate_size == 13696 and abs(glm.params / 1e9 - 9.40) < 0.01
    # Command R: 35B (model card); CohereConfig ties the embedding when the key is absent.
    cmd = arch_of("CohereForAI/c4ai-command-r-v01")
    assert cmd.lm_head_params == 0 and abs(cmd.params / 1e9 - 34.98) < 0.05


def test_chatglm2_multi_query_groups_and_32k_context():
    # THUDM/chatglm2-6b: 2 KV groups of 128 (multi_query_group_num) over 28 layers; its README: context
    # extended to 32K; 6.24B parameters as published.
    arch = arch_of("THUDM/chatglm2-6b")
    assert (arch.kv_heads, arch.head_dim, arch.layers, arch.max_positions) == (2, 128, 28, 32768)
    assert _kv_bytes_bf16(arch) == 28_672
    assert abs(arch.params / 1e9 - 6.24) < 0.01
