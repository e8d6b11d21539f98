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
