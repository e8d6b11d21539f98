"""Catalog rows for language-model architectures new to kvlint's catalog, each checked against a figure its
maker (or the model's own repository) publishes. Sources are recorded per entry in
benchmarks/catalog_curated.json.

- CofeAI/Tele-FLM: the official config.json (TeleFLMForCausalLM, a Llama-style MHA decoder with muP
  multipliers); the technical report (arXiv 2404.16645): "a 52B open-sourced multilingual large language model".
- xai-org/grok-2: a copy of its config.json (Grok1ForCausalLM with residual_moe: 8 experts of 16384 plus a dense
  MLP of 32768 in every layer, SGLang grok.py); the official repository's discussion #6 counts the checkpoint at
  269,515,497,472 parameters, ~115B active, with four RMSNorms per layer (SGLang Grok1DecoderLayer's pre/post
  attention and MoE norms) where kvlint counts two: the exact figure less 2 x 8192 x 64.
- Qwen/Qwen3.5-4B: slime's preset (checked against the HF config, slime PR #1721) and aiconfigurator's Qwen3.5-4B
  cases; the card's "4B"; vLLM logs "Setting attention block size to 528 tokens" for Qwen3.5-4B at TP 1
  (vllm-project/vllm#40696, read for kvlint/capacity/state.py): 16 x cdiv(Gated DeltaNet state page, 16 x KV
  bytes per token of one attention layer) with the float32 recurrent state.
- baidu/ERNIE-4.5-21B-A3B-PT: transformers' Ernie4_5_MoeConfig defaults (Baidu + HF: "a similar configuration to
  that of baidu/ERNIE-4.5-21B-A3B-PT"); the card: 21B total / 3B activated, 28 layers, 20/4 heads, 64 experts
  / 6 activated, 2 shared, 131072 context.
- jet-ai/Jet-Nemotron-2B: the maker's config (NVlabs/Jet-Nemotron jetai/modeling/configs/jetlm_2B.json): 24 JetBlock
  layers priced as the model code builds them (kvlint.catalog.jet_block) with SGLang's state shape, 2 attn + 2
  swa layers keeping KV (SGLang's full_attention_layer_ids); the card's "2B".
- mistralai/Mistral-Large-3-675B-Instruct-2512: the Mistral-format params vLLM's tests state for it, read as vLLM's
  adapt_config_dict reads a params.json (MLA + DeepSeek-V3-style MoE); Mistral AI: 675B total, 41B active.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_arch import arch_of, idle_expert_params

from kvlint.catalog import models
from kvlint.catalog.hf_config import parse_config


def test_tele_flm_is_the_52b_mha_decoder():
    arch = arch_of("CofeAI/Tele-FLM")
    assert arch.params == pytest.approx(52e9, rel=0.02)  # 52,824,121,344
    assert (arch.layers, arch.kv_heads, arch.head_dim, arch.max_positions) == (64, 64, 128, 4096)
    assert arch.lm_head_params == arch.embed_params == 80384 * 8192  # untied
    assert 2 * arch.kv_heads * arch.head_dim * arch.attention_layers * 2 == 2_097_152  # KV bytes/token, bf16


def test_grok_2_counts_its_residual_mlp_beside_the_experts():
    arch = arch_of("xai-org/grok-2")
    assert arch.params == 269_515_497_472 - 2 * 8192 * 64  # the thread's count, less two norms per layer
    assert arch.params - idle_expert_params(arch) == pytest.approx(115e9, rel=0.005)  # "~115B" active
    assert (arch.num_experts, arch.experts_per_token, arch.moe_intermediate_size, arch.moe_layers) == (
        8,
        2,
        16384,
        64,
    )
    residual = 3 * 8192 * 32768  # the dense MLP residual_moe adds to each layer
    assert arch.layer_params[0].experts == 8 * 3 * 8192 * 16384 + residual
    assert (arch.layers, arch.kv_heads, arch.head_dim, arch.max_positions) == (64, 8, 128, 131072)
    assert arch.lm_head_params == arch.embed_params == 131072 * 8192


def test_a_grok_config_without_residual_moe_has_experts_only():
    entry = models.lookup("xai-org/grok-2")
    assert entry is not None and entry["config"]["residual_moe"] is True
    plain = dict(entry["config"], residual_moe=False)
    assert parse_config(plain, "x", "test").params == arch_of("xai-org/grok-2").params - 64 * 3 * 8192 * 32768


def test_qwen3_5_4b_hybrid_state_matches_vllms_block_size():
    arch = arch_of("Qwen/Qwen3.5-4B")
    assert arch_of("Qwen/Qwen3.5-4b").params == arch.params  # the corpus's spelling, lower-case b
    assert 4.0e9 < arch.params < 4.3e9  # 4,205,747,200 for the language model (the tower is not sized)
    assert arch.lm_head_params == 0 and arch.embed_params == 248320 * 2560  # tied
    assert arch.attention_layers == 8 and len(arch.state_layers) == 24  # 8 x (3 Gated DeltaNet + 1 attention)
    assert (arch.kv_heads, arch.head_dim, arch.max_positions) == (4, 256, 262144)
    conv = (2 * 16 * 128 + 32 * 128) * (4 - 1) * 2  # q/k/v conv windows, bf16
    ssm = 32 * 128 * 128 * 4  # value heads x key dim x value dim, float32
    per_layer = conv + ssm
    assert arch.state_bytes_per_seq == 24 * per_layer == 51_511_296
    kv_per_token_one_layer = 2 * arch.kv_heads * arch.head_dim * 2
    assert 16 * -(-per_layer // (16 * kv_per_token_one_layer)) == 528  # vLLM's logged attention block size


def test_ernie_4_5_21b_a3b_matches_its_card():
    arch = arch_of("baidu/ERNIE-4.5-21B-A3B-PT")
    assert arch.params == pytest.approx(21e9, rel=0.04)  # "21B total" (21.83B)
    assert arch.params - idle_expert_params(arch) - arch.embed_params == pytest.approx(3e9, rel=0.05)  # "3B"
    assert (arch.layers, arch.query_heads, arch.kv_heads, arch.head_dim, arch.max_positions) == (
        28,
        20,
        4,
        128,
        131072,
    )
    assert (arch.num_experts, arch.experts_per_token, arch.moe_layers) == (64, 6, 27)  # layer 0 dense
    assert arch.lm_head_params == 0  # tied


def test_ernie_moe_end_index_minus_one_means_the_last_layer():
    entry = models.lookup("baidu/ERNIE-4.5-21B-A3B-PT")
    assert entry is not None
    as_written_by_transformers = dict(entry["config"], moe_layer_end_index=-1)  # the class default
    assert parse_config(as_written_by_transformers, "x", "test").moe_layers == 27


def test_jet_nemotron_2b_prices_its_jet_blocks_and_their_state():
    arch = arch_of("jet-ai/Jet-Nemotron-2B")
    assert arch.params == pytest.approx(2.0e9, rel=0.03)  # 1,964,806,208 (the card's "2B")
    assert arch.attention_layers == 4 and len(arch.state_layers) == 24  # attn at 14, 19; swa at 20, 21
    assert (arch.kv_heads, arch.head_dim, arch.max_positions) == (2, 128, 131072)
    heads, dk, dv, h = 12, 96, 256, 1536  # efficient_attention_config.jet: 12 x 96, expand_v 8/3 -> 256
    conv = (heads * dv + 2 * heads * dk) * (4 - 1) * 2  # SGLang Mamba2StateShape conv window, bf16
    recurrent = heads * dv * dk * 4  # float32 (mamba2_state_dtype's default)
    assert arch.state_bytes_per_seq == 24 * (conv + recurrent) == 29_085_696
    generator = h * (heads * dv // 8) + (heads * dv // 8) * heads * dv * 4 + heads * dv * 4
    jet_layer = (
        2 * h * heads * dk + 2 * h * heads * dv + 2 * h * heads + 2 * heads + generator + dv + heads * dv * h
    )
    assert arch.layer_params[0].attn == jet_layer
    assert (
        arch.layer_params[14].attn == h * 12 * 128 + 2 * h * 2 * 128 + 12 * 128 * h + 12 * 128 + 2 * 2 * 128
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"layer_types": ["jet"] * 27}, "layer_types must name jet / attn / swa"),
        (
            {"efficient_attention_config": {"swa": {"window_size": 1152}}},
            "needs efficient_attention_config.jet",
        ),
        (
            {"efficient_attention_config": {"jet": {"num_heads": "x", "head_dim": 96}}},
            "jet.num_heads must be",
        ),
    ],
)
def test_a_malformed_jet_nemotron_config_is_a_located_kv003(tmp_path: Path, change, message):
    entry = models.lookup("jet-ai/Jet-Nemotron-2B")
    assert entry is not None
    with pytest.raises(ValueError, match=message):
        parse_config(dict(entry["config"], **change), "t/bad", "test")
    (tmp_path / "config.json").write_text(json.dumps(dict(entry["config"], **change)))
    res = models.resolve(str(tmp_path))
    assert res.arch is None and message in res.how  # the reason, for a located KV003


MISTRAL_LARGE_3_PARAMS = {  # vllm-project/vllm@05f5d7d3 tests/transformers_utils/test_config.py (Mistral-Large-3)
    "dim": 7168,
    "n_layers": 61,
    "head_dim": 192,
    "hidden_dim": 16384,
    "n_heads": 128,
    "n_kv_heads": 128,
    "norm_eps": 1e-5,
    "vocab_size": 131072,
    "rope_theta": 10000.0,
    "max_position_embeddings": 294912,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "moe": {
        "num_experts": 128,
        "num_experts_per_tok": 4,
        "num_shared_experts": 1,
        "expert_hidden_dim": 4096,
        "first_k_dense_replace": 3,
        "route_every_n": 1,
    },
}


def test_mistral_large_3_matches_675b_total_41b_active():
    arch = arch_of("mistralai/Mistral-Large-3-675B-Instruct-2512")
    assert arch.params == pytest.approx(675e9, rel=0.005)  # 673.42B without the vision encoder
    assert arch.params - idle_expert_params(arch) == pytest.approx(41e9, rel=0.03)  # 39.95B
    assert arch.mla and (arch.head_dim, arch.layers, arch.moe_layers) == (512 + 64, 61, 58)
    assert arch.head_dim * arch.attention_layers * 2 == 70_272  # MLA latent KV bytes per token, bf16
    assert arch.quant is not None and arch.quant.method == "fp8"


def test_a_mistral_large_3_params_json_is_read_as_vllm_reads_it(tmp_path: Path):
    """A pulled or local params.json (no config.json) of the MLA + shared-expert shape is DeepSeek-V3-like, as vLLM
    serves it; it was read as a Mixtral of 128 experts of hidden_dim 16384 with 128 full KV heads before."""
    (tmp_path / "params.json").write_text(json.dumps(MISTRAL_LARGE_3_PARAMS))
    res = models.resolve(str(tmp_path))
    assert res.arch is not None and res.arch.mla
    assert res.arch.params == arch_of("mistralai/Mistral-Large-3-675B-Instruct-2512").params
    assert (res.arch.num_experts, res.arch.experts_per_token, res.arch.moe_intermediate_size) == (
        128,
        4,
        4096,
    )


@pytest.mark.parametrize("family", ["arcee", "nemotron"])
def test_relu2_families_have_an_ungated_mlp(family):
    """Arcee (AFM-4.5B) and Nemotron-4 MLPs are up_proj / down_proj around ReLU^2 with no gate (transformers
    ArceeMLP, NemotronMLP): two matrices per layer, not three. Shapes of an AFM-4.5B fine-tune's config
    (https://huggingface.co/Delta-Vector/Austral-AFM-SFT/blob/main/config.json: 36 x 2560, 20 / 4 heads, intermediate
    18432, vocab 128005, untied); the Hub lists AFM-4.5B at 4.6B parameters - with a gate it would count 6.3B."""
    cfg = {
        "architectures": ["ArceeForCausalLM" if family == "arcee" else "NemotronForCausalLM"],
        "model_type": family,
        "hidden_act": "relu2",
        "hidden_size": 2560,
        "intermediate_size": 18432,
        "num_hidden_layers": 36,
        "num_attention_heads": 20,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "vocab_size": 128005,
        "max_position_embeddings": 65536,
        "tie_word_embeddings": False,
    }
    arch = parse_config(cfg, "t/relu2", "test")
    assert arch.layer_params[0].mlp == 2 * 2560 * 18432
    assert arch.params == pytest.approx(4.6e9, rel=0.01)
