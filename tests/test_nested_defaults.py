"""A nested text / vision config omits the keys equal to its class default; kvlint fills them as transformers does.

transformers writes a composite config's sub-configs as a diff against the sub-config class's defaults
(configuration_utils.recursive_diff_dict) and fills them back on load (MistralConfig, LlamaConfig,
PixtralVisionConfig defaults, transformers 5.24.0). mistral-community/pixtral-12b's text_config has no
num_attention_heads for that reason; Mistral's own params.json for the model (Pixtral-12B-2409) states
n_heads 32, n_kv_heads 8, head_dim 128. Published size: "a 12B parameter multimodal decoder" and "a 400M
parameter vision encoder" (Mistral's Pixtral 12B announcement, quoted on the model card).
"""

from __future__ import annotations

import pytest

from kvlint.catalog import models
from kvlint.catalog.hf_config import ConfigError, parse_config


def test_pixtral_text_heads_come_from_the_mistral_default():
    arch = models.resolve("mistral-community/pixtral-12b").arch
    assert arch is not None
    assert (arch.layers, arch.query_heads, arch.kv_heads, arch.head_dim) == (40, 32, 8, 128)
    assert arch.max_positions == 1_024_000 and arch.sliding_window is None
    # bf16 KV per token: 2 (K, V) x 8 heads x 128 x 40 layers x 2 bytes
    assert 2 * arch.kv_heads * arch.head_dim * arch.attention_layers * 2 == 163_840
    assert arch.params - arch.vision_params == pytest.approx(12.25e9, rel=0.01)
    # the tower's size is PixtralVisionConfig's default (24 layers x 1024), about the published 400M
    assert "24 layers x hidden 1024" in arch.vision_note
    assert arch.vision_params == pytest.approx(0.4e9, rel=0.2)


_TEXT = {"hidden_size": 1024, "num_hidden_layers": 4, "vocab_size": 1000, "intermediate_size": 2048}


def test_nested_llama_and_mistral_text_configs_take_their_class_defaults():
    llama = parse_config({"model_type": "llava", "text_config": dict(_TEXT, model_type="llama")}, "t", "t")
    assert (llama.query_heads, llama.kv_heads, llama.max_positions) == (32, 32, 2048)  # LlamaConfig: MHA
    mistral = parse_config(
        {"model_type": "llava", "text_config": dict(_TEXT, model_type="mistral")}, "t", "t"
    )
    assert (mistral.query_heads, mistral.kv_heads) == (32, 8)
    assert mistral.sliding_window == 4096  # MistralConfig's default window, as vLLM would read it


def test_a_stated_key_wins_and_a_top_level_config_gets_no_defaults():
    stated = dict(_TEXT, model_type="mistral", num_attention_heads=16, num_key_value_heads=16)
    arch = parse_config({"model_type": "llava", "text_config": stated}, "t", "t")
    assert (arch.query_heads, arch.kv_heads) == (16, 16)
    with pytest.raises(ConfigError, match="num_attention_heads"):
        parse_config(dict(_TEXT, model_type="mistral"), "t", "t")
