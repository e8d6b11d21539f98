"""Weights as the checkpoint stores them: each module group at its own bytes (kvlint.catalog.quant_modules).

Real configs, both in the shipped catalog with their sources:
- moonshotai/Kimi-K2.5 (ai-dynamo/aiconfigurator@efaa0e64 aic-core/src/aiconfigurator_core/model_configs/
  moonshotai--Kimi-K2.5_config.json): compressed-tensors, one config group targeting Linear with int4 weights,
  group 32, and `ignore: [lm_head, re:.*self_attn.*, re:.*shared_experts.*, re:.*mlp\\.(gate|up|gate_up|down)_proj.*]`
  -- only the routed experts are 4-bit (Moonshot's K2-Thinking recipe: INT4 QAT on the MoE experts).
- nvidia/Kimi-K2.6-NVFP4 (same commit, nvidia--Kimi-K2.6-NVFP4_config.json and _hf_quant_config.json):
  ModelOpt NVFP4 with `exclude_modules` globs per layer: `language_model.model.layers.0*` (the dense first
  layer whole), `...layers.N.self_attn*` and `...layers.N.mlp.shared_experts*` for every other layer.
Expected bytes follow from the formats' rules: int4 + one bf16 scale per 32 weights = 4.5 bits; NVFP4 = 4 bits
+ one fp8 scale per 16 = 4.5 bits; every module the config leaves out at its checkpoint's 16 bits.
"""

from __future__ import annotations

import copy

import pytest

from kvlint.capacity.weights import weights
from kvlint.catalog import models
from kvlint.catalog.hf_config import parse_config
from kvlint.catalog.quant_modules import ATTN, EXPERTS, MLP, SHARED, reach, skips


def _arch(model_id: str):
    arch = models.resolve(model_id).arch
    assert arch is not None and arch.quant is not None
    return arch


def _sixteen_bit_rest(arch) -> float:
    return 2 * (
        arch.embed_params
        + arch.lm_head_params
        + arch.final_params
        + arch.vision_params
        + sum(p.replicated for p in arch.layer_params)
    )


def test_kimi_k25_prices_only_the_routed_experts_at_4_bits():
    arch = _arch("moonshotai/Kimi-K2.5")
    assert arch.quant.covers == {EXPERTS}
    routed = sum(p.experts - p.shared for p in arch.layer_params)
    sixteen = sum(p.attn + p.mlp + p.shared for p in arch.layer_params)
    bits = 4 + 16 / 32
    expected = routed * bits / 8 + sixteen * 2 + _sixteen_bit_rest(arch)
    assert weights(arch, 8, 1).total == int(expected)
    assert "attn, mlp, shared left 16-bit by the config" in arch.quant.scheme


def test_per_layer_globs_leave_layer_0_and_every_shared_expert_in_16_bit():
    arch = _arch("nvidia/Kimi-K2.6-NVFP4")
    dense = [i for i, p in enumerate(arch.layer_params) if p.mlp]
    assert dense == [0]  # first_k_dense_replace: 1
    assert {(ATTN, 0), (MLP, 0), (SHARED, 1), (ATTN, 60)} <= arch.quant.skip_layers
    expected = _sixteen_bit_rest(arch)
    for i, p in enumerate(arch.layer_params):
        if i == 0:
            expected += 2 * (p.attn + p.mlp + p.experts)
        else:
            expected += 2 * (p.attn + p.shared) + (p.experts - p.shared) * 4.5 / 8
    assert weights(arch, 8, 1).total == int(expected)


@pytest.mark.parametrize(
    ("pattern", "groups", "layer"),
    [
        ("re:.*self_attn.*", {ATTN}, None),
        ("re:.*shared_experts.*", {SHARED}, None),
        ("re:.*mlp\\.(gate|up|gate_up|down)_proj.*", {MLP}, None),  # the dense MLP, not the experts
        ("language_model.model.layers.0*", {ATTN, MLP, EXPERTS, SHARED}, 0),
        ("language_model.model.layers.12.self_attn*", {ATTN}, 12),
        ("model.layers.3.mlp", {MLP, EXPERTS, SHARED}, 3),  # a prefix: the experts under mlp. too
        ("model.layers.7.mlp.experts.0.down_proj", {EXPERTS}, 7),
    ],
)
def test_patterns_reach_their_module_groups(pattern, groups, layer):
    found = reach(pattern)
    assert found is not None and found.groups == groups and found.layer == layer


@pytest.mark.parametrize(
    "pattern",
    [
        "lm_head",
        "re:.*mlp.gate$",
        "gate",
        "model.embed_tokens",
        "vision_model.model.layers.0.self_attn.q_proj",
        "re:.*vision_tower.*",
        "mm_projector*",
        "model.norm",
        "language_model.lm_head",
    ],
)
def test_must_not_match_parts_already_priced_at_16_bits(pattern):
    """Routers, heads, embeddings, norms and vision towers change no quantized group."""
    found = reach(pattern)
    assert found is not None and found.groups == frozenset()


def test_a_pattern_kvlint_cannot_place_is_said_not_guessed():
    assert reach("transformer.h.0.foo") is None
    # zai-org/GLM-5.2-FP8's modules_to_not_convert (catalog, aiconfigurator@efaa0e64) keeps each DSA indexer's
    # weights projection in 16-bit: one part of the attention block, not the layer's whole attention
    assert reach("model.layers.3.self_attn.indexers_proj") is None
    assert reach("language_model.model.layers.3.self_attn.q_proj") == (frozenset({ATTN}), 3)
    assert skips(["transformer.h.0.foo", "lm_head"]).unplaced == ("transformer.h.0.foo",)
    cfg = copy.deepcopy(models.lookup("moonshotai/Kimi-K2.5")["config"])
    cfg["text_config"]["quantization_config"]["ignore"].append("transformer.h.0.foo")
    arch = parse_config(cfg, "x", "test")
    assert arch.quant is not None and arch.quant.unplaced == ("transformer.h.0.foo",)
    assert "the weights may be higher" in arch.quant.scheme


def test_config_groups_price_each_target_at_its_own_bits():
    """Two config groups: experts int4 (group 32), attention int8 per channel; the dense MLP targeted by none."""
    cfg = copy.deepcopy(models.lookup("moonshotai/Kimi-K2.5")["config"])
    q = cfg["text_config"]["quantization_config"]
    int4 = q["config_groups"]["group_0"]
    q["config_groups"] = {
        "experts": dict(int4, targets=["re:.*mlp\\.experts.*"]),
        "attention": {
            "targets": ["re:.*self_attn.*"],
            "weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
        },
    }
    q["ignore"] = ["lm_head"]
    arch = parse_config(cfg, "x", "test")
    assert arch.quant is not None and arch.quant.covers == {ATTN, EXPERTS}
    assert dict(arch.quant.group_bits) == {ATTN: 8.0}
    routed = sum(p.experts - p.shared for p in arch.layer_params)
    attn = sum(p.attn for p in arch.layer_params)
    sixteen = sum(p.mlp + p.shared for p in arch.layer_params)
    expected = routed * 4.5 / 8 + attn * 8 / 8 + sixteen * 2 + _sixteen_bit_rest(arch)
    assert weights(arch, 1, 1).total == int(expected)
