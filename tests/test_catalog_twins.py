"""Catalog ids that share a catalogued architecture ("twins", issue #11): each row names the maker's statement
of its base; each test checks a published figure of the id against what kvlint prices for it."""

from __future__ import annotations

import json
from pathlib import Path

from kvlint.catalog import models
from tests.catalog_arch import arch_of

_DATA = Path(models.__file__).resolve().parent / "data" / "models.json"


def _row(model_id: str) -> dict:
    rows = json.loads(_DATA.read_text())["models"]
    return next(r for r in rows if r["id"] == model_id)


def test_kimi_dev_72b_is_qwen2_5_72b_base():
    """Moonshot: Kimi-Dev-72B is mid-trained from the Qwen 2.5-72B base ('72B'); its README serves it with
    --max-seq-len-to-capture 131072, the base's positions (Qwen2.5-72B-Instruct states 32768)."""
    dev = arch_of("moonshotai/Kimi-Dev-72B")
    assert _row("moonshotai/Kimi-Dev-72B")["twin_of"] == "Qwen/Qwen2.5-72B"
    assert dev.params == arch_of("Qwen/Qwen2.5-72B").params == 72_706_203_648  # leaderboard: 72.706B
    assert dev.max_positions == 131072 != arch_of("Qwen/Qwen2.5-72B-Instruct").max_positions
    assert (dev.layers, dev.kv_heads, dev.head_dim) == (80, 8, 128)


def test_skywork_or1_7b_preview_is_r1_distill_qwen_7b():
    """Skywork's README: the OR1 Preview models are RL-trained on top of DeepSeek-R1-Distill-Qwen-7B / -32B
    (a 7.6B Qwen2.5-Math-7B geometry: 28 layers, 4 KV heads, vocab 152064)."""
    or1 = arch_of("Skywork/Skywork-OR1-7B-Preview")
    assert _row("Skywork/Skywork-OR1-7B-Preview")["twin_of"] == "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"
    assert or1.params == 7_615_616_512
    assert (or1.layers, or1.kv_heads, or1.vocab_size, or1.max_positions) == (28, 4, 152064, 131072)


def test_bonito_v1_is_mistral_7b_v0_1():
    """BatsResearch's card: MistralForCausalLM fine-tuned from Mistral-7B-v0.1; the AWQ copy of its config
    keeps vocab 32000 (no added task tokens), the 4096-token sliding window and 32768 positions."""
    bonito = arch_of("BatsResearch/bonito-v1")
    assert bonito.params == arch_of("mistralai/Mistral-7B-v0.1").params == 7_241_732_096
    assert (bonito.vocab_size, bonito.sliding_window, bonito.max_positions) == (32000, 4096, 32768)
