"""Llama 3.2 Vision (mllama): cross-attention layers hold image tokens, not text tokens.

Configs: OME's test copies (github:sgl-project/ome@17b77ed pkg/hfutil/modelconfig/testdata/
llama3_2_11b_vision.json, llama3_2_90b_vision.json), shipped in the catalog.
Published sizes: Meta's model card, "11B (10.6)" and "90B (88.8)" billion parameters
(quoted by https://aiwiki.ai/wiki/llama_3_2_vision: "11B (10.6B actual) and 90B (88.8B actual)").
Encoder tokens: vLLM mllama.py (vllm-project/vllm@6f0b37b8) calc_token_per_chunk =
(image_size // 14) ** 2 + 1 per tile, times vision_config.max_num_tiles tiles per image.
"""

import pytest
from conftest import vllm_settings

from kvlint.capacity.kv import cdiv
from kvlint.catalog.arch import CROSS, FULL
from kvlint.catalog.gpus import lookup
from kvlint.catalog.hf_config import compact, parse_config
from kvlint.catalog.models import resolve
from kvlint.engines.vllm import plan as vllm

GIB = 1 << 30


def test_cross_attention_layers_are_their_own_kind():
    a = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct").arch
    assert a.layers == 40 and a.cross_layers == 8
    assert [i for i, k in enumerate(a.layer_kinds) if k == CROSS] == [3, 8, 13, 18, 23, 28, 33, 38]
    assert a.layer_kinds.count(FULL) == 32
    assert a.encoder_tokens == 4 * ((560 // 14) ** 2 + 1) == 6404
    big = resolve("meta-llama/Llama-3.2-90B-Vision-Instruct").arch
    assert (big.layers, big.cross_layers, big.encoder_tokens) == (100, 20, 6404)


@pytest.mark.parametrize(
    ("model", "published"),
    [
        ("meta-llama/Llama-3.2-11B-Vision-Instruct", 10.6e9),
        ("meta-llama/Llama-3.2-90B-Vision-Instruct", 88.8e9),
    ],
)
def test_parameters_match_the_model_card(model, published):
    a = resolve(model).arch
    assert a.params == pytest.approx(published, rel=0.01)
    # the tower (32 local + 8 global layers of 1280, tile tables, 7680 -> text projector) is under 1B
    assert 0.85e9 < a.vision_params < 0.95e9


def test_v1_prices_cross_layers_per_image_not_per_text_token():
    a = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct").arch
    p = vllm.plan(a, lookup("H100"), vllm_settings(kv_cache_memory_bytes=20 * GIB, max_model_len=8192))
    per_layer = 2 * 8 * 128 * 2
    assert p.kv_per_token == 32 * per_layer  # the 8 cross layers hold no text token
    # hybrid manager: groups of 8 layers, 4 full-attention groups + 1 cross-attention group
    assert p.layers_per_block == 40
    assert p.request_units == 4 * cdiv(8192, 16) + cdiv(6404, 16)
    assert any("cross-attention" in n for n in p.notes)


def test_v0_gives_every_layer_a_slot_and_the_image_its_own_blocks():
    a = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct").arch
    s = vllm_settings(
        kv_cache_memory_bytes=20 * GIB, generation="V0", hybrid_kv_cache_manager=False, max_model_len=8192
    )
    p = vllm.plan(a, lookup("H100"), s)
    assert p.kv_per_token == 40 * 2 * 8 * 128 * 2  # V0 CacheEngine: a tensor per layer, cross ones too
    assert p.request_units == cdiv(8192, 16) + cdiv(6404, 16)


def test_encoder_decoder_falls_back_to_v0_before_0_11():
    assert vllm.generation((0, 9, 2), encoder_decoder=True) == "V0"
    assert vllm.generation((0, 9, 2)) == "V1"
    assert vllm.generation((0, 11, 0), encoder_decoder=True) == "V1"


def test_a_config_without_cross_layers_is_unchanged():
    a = resolve("meta-llama/Llama-3.1-8B-Instruct").arch
    assert a.cross_layers == 0 and a.encoder_tokens == 0


def test_out_of_range_cross_layer_indices_are_ignored():
    cfg = {
        "model_type": "mllama",
        "text_config": {
            "model_type": "mllama_text_model",
            "num_hidden_layers": 4,
            "hidden_size": 256,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "intermediate_size": 512,
            "vocab_size": 1000,
            "cross_attention_layers": [1, 9, -1, True],
        },
        "vision_config": {"hidden_size": 64, "num_hidden_layers": 2, "image_size": 56, "patch_size": 14},
    }
    a = parse_config(compact(cfg), "tiny", "test")
    assert a.layer_kinds == (FULL, CROSS, FULL, FULL)
    assert a.encoder_tokens == 17  # one tile: (56 / 14)^2 + 1


def test_sglang_gives_image_tokens_pool_slots_beside_the_text():
    # SGLang keeps one pool over all 40 layers; prepare_encoder_info_extend (sgl-project/sglang@fd3907ee
    # python/sglang/srt/managers/schedule_batch.py) gives a request's image tokens slots of that pool
    from kvlint.engines.sglang import plan as sglang
    from kvlint.record import replace

    a = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct").arch
    s = replace(
        vllm_settings(engine="sglang", version="0.5.3", generation="-", max_num_seqs=0, max_model_len=8192),
        utilization=0.85,
        block_size=1,
        hybrid_kv_cache_manager=False,
    )
    p = sglang.plan(a, lookup("H100"), s)
    assert p.kv_per_token == 40 * 2 * 8 * 128 * 2
    assert p.request_units == 8192 + 6404
    assert p.max_concurrency == pytest.approx(p.kv_tokens / (8192 + 6404))
    assert p.max_len_that_fits == p.kv_tokens - 6404
