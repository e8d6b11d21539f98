"""Catalog rows written from model builders that state every dimension (not from a config.json copy),
and twins whose identity a builder or preset table states: checked against the published sizes.

- meta-llama/Llama-Guard-3-8B: Meta's llama-models sku_list (arch_args of the Llama 3.1 8B, with
  use_scaled_rope False; max_seq_length 131072). The card calls it "a Llama-3.1-8B pretrained model,
  fine-tuned": the parameter count must equal Llama-3.1-8B's exactly (8,030,261,248).
- deepseek-ai/DeepSeek-V2: Megatron-Bridge DeepSeekV2ModelProvider / NeMo DeepSeekV2Config. DeepSeek's
  README: "236B total parameters, of which 21B are activated for each token", context 128K.
- google/codegemma-*: NeMo CodeGemmaConfig{2B,7B}(GemmaConfig{2B,7B}) with no change; keras-hub
  gemma_presets.py: code_gemma_7b_en / code_gemma_1.1_instruct_7b_en 8,537,680,896 parameters,
  code_gemma_2b_en / code_gemma_1.1_2b_en 2,506,172,416 (keras-hub counts tied embeddings once, as kvlint does).
- XiaomiMiMo/MiMo-7B-RL: slime's scripts/models/mimo-7B-rl.sh states the MiMo-7B-Base geometry.
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of, idle_expert_params

from kvlint.catalog import models


def _active(arch) -> int:
    return arch.params - idle_expert_params(arch)


def test_llama_guard_3_8b_is_llama_3_1_8b_sized():
    guard, base = arch_of("meta-llama/Llama-Guard-3-8B"), arch_of("meta-llama/Llama-3.1-8B")
    assert guard.params == base.params == 8_030_261_248
    assert (guard.layers, guard.kv_heads, guard.head_dim, guard.intermediate_size) == (32, 8, 128, 14336)
    assert guard.max_positions == 131072  # llama-models datatypes.py max_seq_length for llama_guard_3_8b
    assert 2 * guard.kv_heads * guard.head_dim * guard.attention_layers * 2 == 131072  # KV bytes/token, bf16


def test_deepseek_v2_matches_236b_total_21b_active():
    arch = arch_of("deepseek-ai/DeepSeek-V2")
    assert arch.params == pytest.approx(236e9, rel=0.01)
    assert _active(arch) == pytest.approx(21e9, rel=0.02)
    assert arch.mla and arch.kv_heads == 1 and arch.head_dim == 512 + 64  # one latent per token per layer
    assert (
        arch.max_positions == 4096 * 40
    )  # yarn: original 4096 x factor 40 (above the 128K the README names)
    assert (arch.num_experts, arch.experts_per_token, arch.moe_layers) == (160, 6, 59)


@pytest.mark.parametrize(
    ("model_id", "params"),
    [
        ("google/codegemma-7b", 8_537_680_896),
        ("google/codegemma-7b-it", 8_537_680_896),
        ("google/codegemma-1.1-7b-it", 8_537_680_896),
        ("google/codegemma-2b", 2_506_172_416),
        ("google/codegemma-1.1-2b", 2_506_172_416),
    ],
)
def test_codegemma_matches_keras_hub_preset_counts(model_id, params):
    arch = arch_of(model_id)
    assert arch.params == params
    assert arch.head_dim == 256 and arch.max_positions == 8192


def test_mimo_7b_rl_has_the_base_geometry():
    rl, base = arch_of("XiaomiMiMo/MiMo-7B-RL"), arch_of("XiaomiMiMo/MiMo-7B-Base")
    assert (rl.layers, rl.hidden_size, rl.kv_heads, rl.vocab_size) == (36, 4096, 8, 151680)
    assert rl.params == base.params and rl.mtp_params == base.mtp_params > 0


def test_qwen3_coder_30b_a3b_matches_its_model_overview():
    """fastllm's copy of the repo: its README's Model Overview gives 30.5B total / 3.3B activated."""
    arch = arch_of("Qwen/Qwen3-Coder-30B-A3B-Instruct")
    assert arch.params == pytest.approx(30.5e9, rel=0.005)
    assert _active(arch) == pytest.approx(3.3e9, rel=0.03)
    assert (arch.layers, arch.query_heads, arch.kv_heads, arch.num_experts) == (48, 32, 4, 128)
    assert arch.max_positions == 262144
    fp8 = models.resolve("Qwen3-Coder-30B-A3B-Instruct-FP8")  # the org-less id a corpus manifest names
    assert fp8.arch is not None and fp8.arch.quant is not None and fp8.arch.quant.method == "fp8"


def test_qwen3_embedding_0_6b_matches_keras_hub_count():
    """keras-hub qwen3_presets.py: qwen3_embedding_0.6b_en has 595,776,512 parameters -- Qwen3-0.6B's
    geometry with the embedding release's 151,669-token vocabulary (267 rows fewer than 151,936)."""
    emb, base = arch_of("Qwen/Qwen3-Embedding-0.6B"), arch_of("Qwen/Qwen3-0.6B")
    assert emb.params == 595_776_512
    assert base.params - emb.params == (151936 - 151669) * 1024
    assert (emb.layers, emb.kv_heads, emb.head_dim, emb.max_positions) == (28, 8, 128, 32768)


def test_granite_3_0_8b_is_the_3_1_geometry_with_4k_context():
    """IBM: Granite 3.1 extends the context of Granite 3.0 from 4K to 128K (adjusting RoPE theta);
    the two 8B instruct configs (checked-in copies) differ only there."""
    g30, g31 = arch_of("ibm-granite/granite-3.0-8b-instruct"), arch_of("ibm-granite/granite-3.1-8b-instruct")
    assert g30.params == g31.params == pytest.approx(8.1e9, rel=0.01)
    assert (g30.max_positions, g31.max_positions) == (4096, 131072)
    assert (g30.layers, g30.kv_heads, g30.head_dim) == (40, 8, 128)


def test_smollm3_from_its_training_config():
    """huggingface/smollm's long-context stage config: 36 x 2048, 16 / 4 heads, 65536 positions."""
    base, chat = arch_of("HuggingFaceTB/SmolLM3-3B-Base"), arch_of("HuggingFaceTB/SmolLM3-3B")
    assert base.params == chat.params == pytest.approx(3.08e9, rel=0.005)
    assert (base.kv_heads, base.head_dim, base.layers, base.max_positions) == (4, 128, 36, 65536)


def test_opt_6_7b_from_a_republished_original_config():
    """OPT paper (Zhang et al. 2022, Table 1): 6.7B, 32 layers, 32 heads, d_model 4096; MHA, learned positions."""
    arch = arch_of("facebook/opt-6.7b")
    assert arch.params == pytest.approx(6.7e9, rel=0.01)
    assert (arch.layers, arch.kv_heads, arch.head_dim, arch.max_positions) == (32, 32, 128, 2048)


def test_phi_tiny_moe_matches_its_card_total():
    """The card: 3.8B total, 1.1B activated (SlimMoE). Active lies between kvlint's count without the
    embedding and output matrices (1.03B) and with them (1.29B); the total is within 1.5 %."""
    arch = arch_of("microsoft/Phi-tiny-MoE-instruct")
    assert arch.params == pytest.approx(3.8e9, rel=0.015)
    no_embed = _active(arch) - arch.embed_params - arch.lm_head_params
    assert no_embed < 1.1e9 < _active(arch)
    assert (arch.layers, arch.kv_heads, arch.head_dim, arch.num_experts, arch.experts_per_token) == (
        32,
        4,
        128,
        16,
        2,
    )


def test_nemotron_nano_9b_v2_matches_its_card():
    """NVIDIA Megatron-LM's ModelOpt arguments for NVIDIA-Nemotron-Nano-9B-v2 (and Megatron-Bridge's
    NemotronNanoModelProvider9Bv2). NVIDIA's card / paper: a 9B model, 128K context; "56 layers total:
    27 Mamba layers, 25 MLP layers, 4 attention layers" (https://www.jetson-ai-lab.com/models/nemotron-nano-9b-v2/)."""
    arch = arch_of("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    assert 8.8e9 < arch.params < 9.0e9  # 8,888,227,328: the "9B" of the name
    assert arch.attention_layers == 4 and len(arch.state_layers) == 27  # KV in the 4 attention layers only
    assert (arch.layers, arch.kv_heads, arch.head_dim, arch.max_positions) == (56, 8, 128, 131072)


def test_qwen3_next_instruct_is_the_thinking_geometry():
    """Megatron-Bridge's Qwen3NextModelProvider80B_A3B serves both Qwen3-Next-80B-A3B-Instruct and -Thinking;
    Qwen's card: 80B total / 3B active, 48 layers (12 of them gated attention), 262,144 tokens natively."""
    instruct, thinking = (
        arch_of("Qwen/Qwen3-Next-80B-A3B-Instruct"),
        arch_of("Qwen/Qwen3-Next-80B-A3B-Thinking"),
    )
    assert instruct.params == thinking.params
    assert 78e9 < instruct.params < 82e9  # 79,573,721,856 without the MTP layer
    assert (instruct.layers, instruct.attention_layers, instruct.kv_heads, instruct.head_dim) == (
        48,
        12,
        2,
        256,
    )
    assert instruct.max_positions == 262144


def test_minimax_m2_is_the_m2_5_geometry():
    """aiconfigurator's MiniMaxM2ForCausalLM plan aliases MiniMax-M2 to the M2.5 attention and MoE shapes;
    MiniMax: 230B total / 10B active; Hugging Face lists both repositories at 229B; 196,608-token context."""
    m2, m25 = arch_of("MiniMaxAI/MiniMax-M2"), arch_of("MiniMaxAI/MiniMax-M2.5")
    assert m2.params == m25.params and 228e9 < m2.params < 231e9  # 228,689,304,576
    assert 9.5e9 < _active(m2) - m2.embed_params - m2.lm_head_params < 10.5e9  # 9.80B active w/o embeddings
    assert (m2.layers, m2.query_heads, m2.kv_heads, m2.head_dim, m2.max_positions) == (62, 48, 8, 128, 196608)
    assert models.resolve("minimax/MiniMax-M2").arch.params == m2.params  # the corpus's organisation spelling


def test_qwen2_vl_72b_is_qwen2_72b_plus_the_qwen2_vl_tower():
    """NeMo Qwen2VLConfig72B: language model = Qwen2Config72B, the 32-layer 1280-wide vision tower of
    every Qwen2-VL size, projector 5120 -> 8192; the AutoRound republication's text config agrees (32,768 positions)."""
    vl, text, small = (
        arch_of("Qwen/Qwen2-VL-72B-Instruct"),
        arch_of("Qwen/Qwen2-72B"),
        arch_of("Qwen/Qwen2-VL-7B-Instruct"),
    )
    assert vl.params - vl.vision_params == text.params  # 72,706,203,648
    # same tower as the 7B; only the merger's last projection grows from 5120 x 3584 to 5120 x 8192 (+ bias)
    assert vl.vision_params - small.vision_params == 5120 * (8192 - 3584) + (8192 - 3584)
    assert 73.0e9 < vl.params < 73.6e9  # "72B" class; 73.41B with the tower
    assert (vl.layers, vl.kv_heads, vl.head_dim, vl.max_positions) == (80, 8, 128, 32768)


@pytest.mark.parametrize(
    ("v16", "v15", "lm_params", "kv_per_token"),
    [
        ("liuhaotian/llava-v1.6-vicuna-7b", "liuhaotian/llava-v1.5-7b", 6_738_415_616, 2 * 32 * 32 * 128 * 2),
        (
            "liuhaotian/llava-v1.6-vicuna-13b",
            "liuhaotian/llava-v1.5-13b",
            13_015_864_320,
            2 * 40 * 40 * 128 * 2,
        ),
    ],
)
def test_llava_1_6_vicuna_keeps_the_1_5_language_model(v16, v15, lm_params, kv_per_token):
    """LLaVA-1.6 Vicuna configs (a fine-tune's copy of the 7B snapshot; HF's 13B conversion) state the
    Vicuna-v1.5 shapes of LLaVA-1.5: the language model is Llama-2-7B/13B sized (6.74B / 13.02B), MHA, 4096 positions."""
    new, old = arch_of(v16), arch_of(v15)
    assert new.params == old.params == lm_params
    assert (
        2 * new.kv_heads * new.head_dim * new.attention_layers * 2 == kv_per_token
    )  # bf16 KV bytes per token
    assert new.max_positions == 4096


def test_qwen3_embedding_4b_matches_keras_hub_count():
    """keras-hub qwen3_presets.py: qwen3_embedding_4b_en has 4,021,774,336 parameters -- Qwen3-4B's
    36-layer geometry with the embedding releases' 151,665-token vocabulary (271 rows fewer, tied)."""
    emb, base = arch_of("Qwen/Qwen3-Embedding-4B"), arch_of("Qwen/Qwen3-4B")
    assert emb.params == 4_021_774_336
    assert base.params - emb.params == (151936 - 151665) * 2560
    assert (emb.layers, emb.kv_heads, emb.head_dim, emb.max_positions) == (36, 8, 128, 32768)


def test_neural_chat_7b_v3_3_is_mistral_7b_v0_1_sized():
    """Intel's card: neural-chat-7b-v3-x are fine-tunes of mistralai/Mistral-7B-v0.1 (7.24B); the v3-3 config
    (as a merge of it carries it) keeps 32 x 4096, 8 KV heads, the 4096-token sliding window and 32768 positions."""
    chat, base = arch_of("Intel/neural-chat-7b-v3-3"), arch_of("mistralai/Mistral-7B-v0.1")
    assert chat.params == base.params == 7_241_732_096
    assert (chat.layers, chat.kv_heads, chat.sliding_window, chat.max_positions) == (32, 8, 4096, 32768)
