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


def test_skywork_reward_gemma_2_27b_is_gemma_2_27b_with_a_score_head():
    """Skywork's config: Gemma2ForSequenceClassification of the gemma-2-27b-it geometry with one label; the
    tied embedding stays, a 4608 x 1 score head replaces the lm_head: keras-hub's 27,227,128,320 + 4,608.
    v0.2 ships the same twelve-shard layout (twin)."""
    v2, v1 = arch_of("Skywork/Skywork-Reward-Gemma-2-27B-v0.2"), arch_of("Skywork/Skywork-Reward-Gemma-2-27B")
    base = arch_of("google/gemma-2-27b-it")
    assert base.params == 27_227_128_320  # keras-hub gemma2_instruct_27b_en
    assert v2.params == v1.params == base.params + 4608
    assert (v2.lm_head_params, v2.head_params) == (0, 4608)
    assert (v2.layers, v2.kv_heads, v2.head_dim, v2.sliding_window) == (46, 16, 128, 4096)


def test_apeach_is_qwen2_5_1_5b_classifier_in_float32():
    """A two-label Qwen2ForSequenceClassification of Qwen2.5-1.5B: its 5 GB + 1.18 GB of safetensors are
    4 bytes per parameter of the base (tied embedding, no lm_head) plus a 1536 x 2 score head."""
    cls, base = arch_of("jason9693/Qwen2.5-1.5B-apeach"), arch_of("Qwen/Qwen2.5-1.5B")
    assert cls.params == base.params + 2 * 1536 == 1_543_717_376
    assert cls.dtype == "float32" and round(cls.params * 4 / 1e9, 2) == 6.17  # Hub shows 5 GB + 1.18 GB
    assert (cls.layers, cls.kv_heads, cls.head_dim) == (28, 2, 128)


def test_reward_heads_replace_the_lm_head_in_weights_and_pipeline_stages():
    """vLLM builds no lm_head for a reward / classification model: Skywork-Reward-Llama-3.1-8B is Llama 3.1 8B
    less its 128256 x 4096 lm_head plus a 4096 x 1 score; with PP 2 the last stage holds no vocabulary rows.
    Qwen2ForRewardModel's head is Linear(h, h) + ReLU + Linear(h, 1) with biases (vLLM qwen2_rm.py)."""
    from kvlint.capacity.weights import weights

    rm, lm = arch_of("Skywork/Skywork-Reward-Llama-3.1-8B-v0.2"), arch_of("meta-llama/Llama-3.1-8B-Instruct")
    assert lm.params - rm.params == 128256 * 4096 - 4096
    assert weights(lm, 1, 1).total - weights(rm, 1, 1).total == 2 * (128256 * 4096 - 4096)
    last_lm, last_rm = weights(lm, 1, 2).per_stage[1], weights(rm, 1, 2).per_stage[1]
    assert last_lm - last_rm == 2 * (128256 * 4096 - 4096)  # 128256 is already a multiple of 64
    qrm, q72 = arch_of("Qwen/Qwen2.5-Math-RM-72B"), arch_of("Qwen/Qwen2.5-72B")
    assert qrm.head_params == 8192 * 8192 + 8192 + 8192 + 1 and qrm.lm_head_params == 0
    assert q72.params - qrm.params == 152064 * 8192 - qrm.head_params  # 71.53B


def test_compact_keeps_a_classifier_label_count_only():
    """compact() keeps id2label's size as num_labels for a classification model (its score head's width) and
    drops it from a language model's config; parse_config prices h x labels."""
    from kvlint.catalog.hf_config import compact, parse_config

    cfg = {
        "architectures": ["LlamaForSequenceClassification"],
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "vocab_size": 100,
        "id2label": {"0": "neg", "1": "neutral", "2": "pos"},
    }
    small = compact(cfg)
    assert small["num_labels"] == 3 and "id2label" not in small
    assert parse_config(small, "x", "t").head_params == 64 * 3
    lm = compact(dict(cfg, architectures=["LlamaForCausalLM"]))
    assert "num_labels" not in lm and parse_config(lm, "x", "t").lm_head_params == 100 * 64


def test_grok_1_from_xai_run_py():
    """xAI's run.py states the whole model: 64 layers x 6144, 48 query / 8 KV heads of 128, 8 experts (top 2)
    of ffn_size(6144, 8) = 32768, vocab 131072, 8192 positions, tied in/out embedding; README: 314B."""
    grok = arch_of("xai-org/grok-1")
    assert abs(grok.params / 314e9 - 1) < 0.01  # 315.68B
    assert (grok.num_experts, grok.experts_per_token, grok.moe_layers, grok.moe_intermediate_size) == (
        8,
        2,
        64,
        32768,
    )
    assert (grok.layers, grok.query_heads, grok.kv_heads, grok.head_dim, grok.max_positions) == (
        64,
        48,
        8,
        128,
        8192,
    )
    assert grok.lm_head_params == 0 and grok.embed_params == 131072 * 6144
    assert 2 * grok.kv_heads * grok.head_dim * grok.attention_layers * 2 == 262_144  # bf16 KV bytes per token


def test_nv_embedqa_1b_v2_is_an_encoder_style_embedding_model(tmp_path):
    """NVIDIA's config: LlamaBidirectionalModel (model_type llama_bidirec), Llama 3.2 1B layers with
    bidirectional attention and mean pooling: a pooling model keeps no KV cache, catalogued or read locally."""
    row = models.resolve("nvidia/llama-3.2-nv-embedqa-1b-v2")
    assert row.arch is None and row.no_kv_cache
    config = json.loads(_DATA.read_text())["archs"][_row("nvidia/llama-3.2-nv-embedqa-1b-v2")["arch"]]
    assert (config["model_type"], config["num_hidden_layers"], config["hidden_size"]) == (
        "llama_bidirec",
        16,
        2048,
    )
    (tmp_path / "config.json").write_text(json.dumps(config))
    local = models.resolve(str(tmp_path))
    assert local.arch is None and local.no_kv_cache and "llama_bidirec" in local.how


def test_deepseek_v2_5_keeps_the_deepseek_v2_shapes():
    """The W4A16 copy of DeepSeek's V2.5 snapshot states DeepSeek-V2's shapes (only the yarn mscale differs);
    236B as its republications are listed; MLA: one 512 + 64 latent per token per layer."""
    v25, v2 = arch_of("deepseek-ai/DeepSeek-V2.5"), arch_of("deepseek-ai/DeepSeek-V2")
    assert v25.params == v2.params and round(v25.params / 1e9) == 236
    assert v25.mla and (v25.layers, v25.head_dim, v25.max_positions) == (60, 576, 163840)
    assert (v25.num_experts, v25.experts_per_token, v25.moe_layers) == (160, 6, 59)


def test_glm_4_6_is_glm_4_5_at_200k_positions():
    """transformers: GLM-4.6 uses GLM-4.5's Glm4MoeForCausalLM with the context grown from 128K to 200K;
    Xinference lists it at 355B with 202,752 positions (Fireworks: 352B) - GLM-4.7's config exactly."""
    g46, g45 = arch_of("zai-org/GLM-4.6"), arch_of("zai-org/GLM-4.5")
    assert g46.params == g45.params and 352e9 < g46.params < 356e9  # 352.80B
    assert (g46.max_positions, g45.max_positions) == (202752, 131072)
    assert models.resolve("zai-org/GLM-4.6-FP8").arch.max_positions == 202752  # the FP8 release, by name


def test_seed_oss_36b_from_the_seedoss_class_and_a_checkpoint_config():
    """SeedOssConfig's defaults (155136 vocab, 27648 MLP, 64 layers, 80/8 heads of 128, 512K positions, q/k/v
    biases, untied) with the checkpoints' hidden size 5120: 36.15B, the Hub's '36B' (4096 would give 28.9B)."""
    seed = arch_of("ByteDance-Seed/Seed-OSS-36B-Instruct")
    assert seed.params == arch_of("ByteDance-Seed/Seed-OSS-36B-Base").params == 36_151_104_512
    assert (seed.layers, seed.query_heads, seed.kv_heads, seed.head_dim, seed.max_positions) == (
        64,
        80,
        8,
        128,
        524288,
    )
    assert 2 * seed.kv_heads * seed.head_dim * seed.layers * 2 == 262_144  # bf16 KV bytes per token


def test_speculator_drafts_are_recognised_never_matched_to_their_verifier():
    """speculators' `<verifier>-speculator.<algorithm>` drafts: recognised as drafts (the verifier named), not
    priced as the verifier's architecture and not unknown; a name outside the convention stays unknown."""
    for ident, verifier in (
        ("RedHatAI/Qwen3-32B-speculator.eagle3", "Qwen3-32B"),
        ("RedHatAI/Qwen3-8B-speculator.dflash", "Qwen3-8B"),
    ):
        res = models.resolve(ident)
        assert res.arch is None and res.kind == "speculative-decoding draft (speculators format)"
        assert f"for the verifier {verifier} " in res.how and "not priced" in res.how
    unknown = models.resolve("acme/model-speculator.unknownalgo")
    assert unknown.arch is None and not unknown.kind


def test_devstral_and_magistral_small_are_mistral_small_3_1_text_models():
    """Mistral's cards: Devstral Small (2505, 2507) is fine-tuned from Mistral-Small-3.1 with the vision encoder removed,
    128k context; Magistral Small 1.0/1.1 build upon Mistral Small 3.1 (2503), text-only until 1.2 added a vision encoder.
    Published size 23.57B = the Mistral-Small-3.1 language model kvlint prices; 128k = 131072 positions, not the
    32768 of Mistral Small 3 (2501), whose weights are the same."""
    small31 = arch_of("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    small3 = arch_of("mistralai/Mistral-Small-24B-Instruct-2501")
    assert round(small31.vision_params / 1e9, 2) == 0.45  # Mistral-Small-3.1 itself keeps its Pixtral tower
    for model_id in (
        "mistralai/Devstral-Small-2505",
        "mistralai/Devstral-Small-2507",
        "mistralai/Magistral-Small-2506",
        "mistralai/Magistral-Small-2507",
    ):
        arch = arch_of(model_id)
        assert round(arch.params / 1e9, 2) == 23.57, model_id
        assert arch.params == small31.params - small31.vision_params, model_id  # its language model
        assert arch.max_positions == 131072 != small3.max_positions, model_id
        assert (arch.layers, arch.kv_heads, arch.head_dim, arch.vocab_size) == (40, 8, 128, 131072), model_id
        assert "Mistral-Small-3.1" in _row(model_id)["source"], model_id
