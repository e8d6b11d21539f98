"""KV bytes per token by layer kind, TP sharding and replication, PP split, groups, blocks."""

import pytest

from kvlint.capacity.kv import (
    bytes_per_token_layer,
    group_layers,
    kv_bytes_per_token_full,
    kv_dtype_bytes,
    kv_heads_per_gpu,
    page_bytes,
    pp_partitions,
)
from kvlint.catalog.arch import FULL, SLIDING
from kvlint.catalog.models import resolve


def arch(mid):
    return resolve(mid).arch


def test_full_attention_llama_8b_is_128_kib_per_token():
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    assert kv_bytes_per_token_full(a, tp=1, kv_bytes=2) == 131_072
    assert page_bytes(a, 1, 2, 16) == 65_536  # 2 x 16 x 8 x 128 x 2 (engine_accounting worked example)


def test_tp_splits_kv_heads_then_replicates_them():
    a = arch("Qwen/Qwen2.5-7B-Instruct")  # 4 KV heads
    assert [kv_heads_per_gpu(a, tp) for tp in (1, 2, 4, 8)] == [4, 2, 1, 1]
    assert bytes_per_token_layer(a, 8, 2) == bytes_per_token_layer(
        a, 4, 2
    )  # stops shrinking at TP >= KV heads


def test_mla_is_one_latent_replicated_on_every_rank():
    a = arch("deepseek-ai/DeepSeek-V3")
    assert bytes_per_token_layer(a, 1, 2) == 1152  # (512 + 64) x 2 B, no factor 2 for K and V
    assert bytes_per_token_layer(a, 8, 2) == 1152
    assert bytes_per_token_layer(a, 8, 1) == 576  # fp8 KV


def test_head_dim_from_config_not_hidden_over_heads():
    a = arch("Qwen/Qwen3-32B")
    assert a.hidden_size // a.query_heads == 80
    assert kv_bytes_per_token_full(a, 1, 2) == 2 * 64 * 8 * 128 * 2


def test_kv_dtype_bytes():
    assert kv_dtype_bytes("auto", "bfloat16") == 2
    assert kv_dtype_bytes("auto", "float32") == 4
    assert kv_dtype_bytes("fp8_e5m2", "bfloat16") == 1


@pytest.mark.parametrize(
    ("layers", "pp", "parts"),
    [(32, 4, [8, 8, 8, 8]), (61, 4, [15, 15, 16, 15]), (62, 4, [15, 16, 16, 15]), (10, 1, [10])],
)
def test_pp_partitions_follow_vllm_get_pp_indices(layers, pp, parts):
    assert pp_partitions(layers, pp) == parts


def test_hybrid_groups_gemma3_pads_sliding_groups():
    a = arch("google/gemma-3-27b-it")  # 52 sliding + 10 full layers
    g = group_layers(tuple(k for k in a.layer_kinds), hybrid=True)
    assert g.group_size == 10 and g.num_groups == 7 and g.padding_layers == 8
    assert group_layers(a.layer_kinds, hybrid=False).num_groups == 1


def test_hybrid_groups_equal_counts():
    g = group_layers((SLIDING, FULL) * 12, hybrid=True)
    assert (g.group_size, g.num_groups, g.padding_layers) == (12, 2, 0)
