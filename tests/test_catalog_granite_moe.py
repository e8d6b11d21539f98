"""Granite 3.0 / 3.1 MoE catalog entries (GraniteMoeForCausalLM) against their published sizes.

Figures: the ibm-granite Granite 3.0 language-model cards (table "Model Architecture") give the
3B-A800M models 3.3B parameters with 800M active and the 1B-A400M models 1.3B with 400M active, which the
names also state. Totals are published to one decimal (hence the 0.05B tolerance); the active figures are
matched without the tied embedding table (0.81B / 0.38B here; 0.88B / 0.43B with it).

KV per token: full attention in every layer, 8 KV heads of head_dim 64 (1536 / 24 and 1024 / 16), so
2 x 8 x 64 x layers x 2 bytes in bf16: 65,536 B (32 layers) and 49,152 B (24 layers).
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of, idle_expert_params


@pytest.mark.parametrize(
    ("model_id", "total", "active", "kv_bytes_bf16"),
    [
        ("ibm-granite/granite-3.0-3b-a800m-instruct", 3.3e9, 0.8e9, 65_536),
        ("ibm-granite/granite-3.1-3b-a800m-instruct", 3.3e9, 0.8e9, 65_536),
        ("ibm-granite/granite-3.0-1b-a400m-base", 1.3e9, 0.4e9, 49_152),
        ("ibm-granite/granite-3.1-1b-a400m-instruct", 1.3e9, 0.4e9, 49_152),
    ],
)
def test_granite_moe_sizes_match_the_published_figures(model_id, total, active, kv_bytes_bf16):
    arch = arch_of(model_id)
    assert arch.lm_head_params == 0  # tie_word_embeddings
    assert 2 * arch.kv_heads * arch.head_dim * arch.attention_layers * 2 == kv_bytes_bf16
    assert arch.params == pytest.approx(total, abs=0.05e9)
    assert arch.params - idle_expert_params(arch) - arch.embed_params == pytest.approx(active, rel=0.06)


def test_granite_31_moe_reads_the_long_context():
    assert arch_of("ibm-granite/granite-3.1-1b-a400m-base").max_positions == 131072
    assert arch_of("ibm-granite/granite-3.0-1b-a400m-base").max_positions == 4096


@pytest.mark.parametrize(
    ("model_id", "total", "attention_layers"),
    [
        ("ibm-granite/granite-4.0-h-small", 32.2e9, 4),  # 32.2B (whatmodel.sh, immers.cloud); card "32B"
        ("ibm-granite/granite-4.0-h-tiny", 6.94e9, 4),  # card "7B"
        ("ibm-granite/granite-4.0-h-micro", 3.2e9, 4),  # Ollama tag 3.2b; card "3B"
        ("ibm-granite/granite-4.0-micro", 3.4e9, 40),  # Ollama tag 3.4b; card "3B"
    ],
)
def test_granite_4_0_sizes_match_the_published_figures(model_id, total, attention_layers):
    """IBM's Granite 4.0 card table: 4 attention + 36 Mamba2 layers in the H models, 40 attention layers in Micro;
    the H-Small / H-Tiny totals need the shared expert beside the routed ones (without it: 31.45B / 6.75B)."""
    arch = arch_of(model_id)
    assert arch.lm_head_params == 0  # shared input/output embeddings
    assert arch.attention_layers == attention_layers and arch.layers == 40
    assert arch.params == pytest.approx(total, abs=0.05e9)


def test_granite_4_0_active_parameters_match_the_card():
    """Card: H-Small 32B total / 9B activated, H-Tiny 7B / 1B (the shared expert is always active)."""
    small, tiny = arch_of("ibm-granite/granite-4.0-h-small"), arch_of("ibm-granite/granite-4.0-h-tiny")
    assert (small.num_experts, small.experts_per_token, tiny.num_experts, tiny.experts_per_token) == (
        72,
        10,
        64,
        6,
    )
    assert small.params - idle_expert_params(small) == pytest.approx(9e9, rel=0.03)
    assert tiny.params - idle_expert_params(tiny) == pytest.approx(1.47e9, rel=0.01)  # "1B" rounded down


def test_granite_shared_mlp_is_priced_beside_the_experts_and_alone_when_dense():
    """vLLM granitemoehybrid.py: experts of intermediate_size when num_local_experts > 0, plus a shared MLP of
    shared_intermediate_size; with no experts the shared MLP is the only MLP (intermediate_size unread)."""
    from kvlint.catalog.hf_config import compact, parse_config

    base = {
        "architectures": ["GraniteMoeHybridForCausalLM"],
        "model_type": "granitemoehybrid",
        "hidden_size": 1024,
        "num_hidden_layers": 2,
        "layer_types": ["mamba", "attention"],
        "num_attention_heads": 8,
        "num_key_value_heads": 8,
        "intermediate_size": 256,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "mamba_n_heads": 32,
        "mamba_d_head": 64,
        "vocab_size": 1000,
        "tie_word_embeddings": True,
    }

    def params(**extra):
        return parse_config(compact({**base, **extra}), "t", "test").params

    assert params(shared_intermediate_size=512) - params() == 2 * 3 * 1024 * 512
    dense = {"num_local_experts": 0, "num_experts_per_tok": 0}
    assert params(**dense, shared_intermediate_size=512) == params(**dense, intermediate_size=512)
