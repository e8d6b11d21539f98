"""Nemotron-NAS (DeciLM) models priced layer by layer from their block_configs (kvlint.catalog.blocks).

Sources: nvidia/Llama-3_3-Nemotron-Super-49B-v1's config.json as aiconfigurator copies it
(ai-dynamo/aiconfigurator@efaa0e64 aic-core/src/aiconfigurator_core/model_configs/
nvidia--Llama-3_3-Nemotron-Super-49B-v1_config.json) and nvidia/Llama-3_1-Nemotron-Ultra-253B-v1's as NeMo
copies it (NVIDIA/NeMo@8cfedd72 nemo/collections/llm/gpt/model/llama_nemotron_config.py
LLAMA_31_NEMOTRON_ULTRA_253B_HETEROGENEOUS_CONFIG), both in the shipped catalog with those sources. The
model cards state 49.9B and 253B parameters. vLLM builds the layers in vllm/model_executor/models/
nemotron_nas.py (DeciLMDecoderLayer: attention and input norm only when attention is not a no-op, KV
heads = num_attention_heads // n_heads_in_group; MLP width from _ffn_mult_to_intermediate_size).
"""

from __future__ import annotations

import copy

import pytest

from kvlint.capacity.weights import weights
from kvlint.catalog import models
from kvlint.catalog.arch import NONE
from kvlint.catalog.blocks import ffn_intermediate
from kvlint.catalog.hf_config import ConfigError, parse_config

SUPER = "nvidia/Llama-3_3-Nemotron-Super-49B-v1"
ULTRA = "nvidia/Llama-3_1-Nemotron-Ultra-253B-v1"


def _config(model_id: str) -> dict:
    entry = models.lookup(model_id)
    assert entry is not None
    return copy.deepcopy(entry["config"])


def _rule_params(cfg: dict) -> int:
    """The parameter count the block configs state, layer by layer, by DeciLM's module shapes."""
    h, nq = cfg["hidden_size"], cfg["num_attention_heads"]
    d = h // nq
    total = 2 * cfg["vocab_size"] * h + h  # untied embedding and lm_head, final norm
    for block in cfg["block_configs"]:
        attn, ffn = block["attention"], block["ffn"]
        if not attn.get("no_op"):
            kv = nq // attn["n_heads_in_group"]
            total += 2 * h * nq * d + 2 * h * kv * d + h  # q, o; k, v; input norm
        if not ffn.get("no_op"):
            inter = -(-int(2 * ffn["ffn_mult"] * h / 3) // 256) * 256
            total += 3 * h * inter + h  # gate, up, down; post-attention norm
    return total


@pytest.mark.parametrize(("model_id", "card_billions"), [(SUPER, 49.9), (ULTRA, 253)])
def test_nas_models_are_priced_per_layer(model_id, card_billions):
    cfg = _config(model_id)
    arch = models.resolve(model_id).arch
    assert arch is not None
    assert arch.params == _rule_params(cfg)
    assert arch.params / 1e9 == pytest.approx(card_billions, abs=0.5)
    assert weights(arch, 1, 1).total == 2 * arch.params  # bf16


def test_no_op_attention_layers_keep_no_kv_cache():
    cfg = _config(SUPER)
    arch = models.resolve(SUPER).arch
    assert arch is not None
    no_op = [i for i, b in enumerate(cfg["block_configs"]) if b["attention"].get("no_op")]
    assert no_op and [i for i, k in enumerate(arch.layer_kinds) if k == NONE] == no_op
    assert arch.attention_layers == len(cfg["block_configs"]) - len(no_op)
    groups = {
        b["attention"]["n_heads_in_group"] for b in cfg["block_configs"] if not b["attention"].get("no_op")
    }
    assert arch.kv_heads == cfg["num_attention_heads"] // groups.pop()


def test_ffn_mult_rounds_up_to_256_as_vllm_does():
    for mult in (5.25, 2.625, 1.3125, 0.5):
        exact = 2 * mult * 8192 / 3
        size = ffn_intermediate(mult, 8192)
        assert size % 256 == 0 and size - 256 < exact <= size


def test_layers_with_different_kv_heads_are_refused_not_guessed():
    cfg = _config(SUPER)
    first = next(b for b in cfg["block_configs"] if not b["attention"].get("no_op"))
    first["attention"]["n_heads_in_group"] = 4
    with pytest.raises(ConfigError, match="different KV heads"):
        parse_config(cfg, "x", "test")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["block_configs"].pop(), "one per layer"),
        (lambda c: c["block_configs"][0]["attention"].update(n_heads_in_group=7), "n_heads_in_group"),
        (lambda c: c["block_configs"][0]["ffn"].pop("ffn_mult"), "neither ffn_mult"),
    ],
)
def test_unreadable_block_configs_are_located(change, message):
    cfg = _config(SUPER)
    change(cfg)
    with pytest.raises(ConfigError, match=message):
        parse_config(cfg, "x", "test")


def test_a_config_without_block_configs_is_unchanged():
    """Must not match: Llama 3.3 70B (the NAS models' parent) stays uniform."""
    arch = models.resolve("meta-llama/Llama-3.3-70B-Instruct").arch
    assert arch is not None
    assert arch.attention_layers == arch.layers == 80
    assert len({(p.attn, p.mlp) for p in arch.layer_params}) == 1
