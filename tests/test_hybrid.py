"""Hybrid decoders (Mamba / linear attention beside attention): which layers hold a growing KV cache,
what the fixed per-sequence state costs, and the parameter count, against figures stated elsewhere.

Figures and where they come from:
- NVIDIA-Nemotron-3-Nano-30B-A3B: model card (huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16):
  31.6B total parameters; 52 layers of which 6 are GQA attention (2 KV heads of 128, as vLLM's
  tests/config/base_model_arch_groundtruth.json records: total_num_kv_heads 2, head_size 128).
- Nemotron-H-56B-Base-8K: 56B in its name and card; NVIDIA-Nemotron-3-Super-120B-A12B: 120B total.
- Qwen3-Next-80B-A3B: model card: 80B total, 48 layers laid out as 12 x (3 Gated DeltaNet + 1 gated
  attention), gated attention with 2 KV heads of 256 (vLLM's groundtruth file agrees: 2, 256, 48).
- Qwen3.5-397B-A17B: 397B total (its name and card), vision tower included.
- Jamba-v0.1 (AI21, arXiv 2403.19887): 52B total, 4 attention layers of 32 (1:7), and a 4 GB KV
  cache (16-bit) at 256K tokens; its config is transformers' JambaConfig defaults.
- Mamba-2 state: vLLM MambaStateShapeCalculator.mamba2_state_shape: conv (kernel - 1) x
  (heads x head_dim + 2 x groups x d_state) in the model dtype, SSM heads x head_dim x d_state in
  mamba_ssm_cache_dtype.
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of

from kvlint.capacity.kv import bytes_per_token_layer, kv_bytes_per_token_full
from kvlint.capacity.state import stage_kinds
from kvlint.catalog import models
from kvlint.catalog.arch import FULL, NONE
from kvlint.catalog.hf_config import ConfigError, parse_config
from kvlint.catalog.hybrid import ATTENTION, DELTANET, MAMBA1, MAMBA2, MLP_ONLY, MOE_ONLY, mixers


def _kv_bf16_per_token(arch) -> int:
    return kv_bytes_per_token_full(arch, 1, 2.0)


@pytest.mark.parametrize(
    ("model_id", "billions", "attention_layers", "kv_heads", "head_dim"),
    [
        ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6, 6, 2, 128),
        ("nvidia/Nemotron-H-56B-Base-8K", 56.0, 10, 8, 128),
        ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120.0, 8, 2, 128),
        ("Qwen/Qwen3-Next-80B-A3B-Thinking", 80.0, 12, 2, 256),
        ("Qwen/Qwen3.5-397B-A17B", 397.0, 15, 2, 256),
    ],
)
def test_hybrid_catalog_models_count_only_attention_layers(
    model_id: str, billions: float, attention_layers: int, kv_heads: int, head_dim: int
) -> None:
    arch = arch_of(model_id)
    assert arch.params / 1e9 == pytest.approx(billions, rel=0.02)
    assert arch.attention_layers == attention_layers
    assert (arch.kv_heads, arch.head_dim) == (kv_heads, head_dim)
    # KV per token: K and V of the attention layers only (bf16)
    assert _kv_bf16_per_token(arch) == attention_layers * 2 * kv_heads * head_dim * 2
    assert arch.state_bytes_per_seq > 0
    assert any("fixed state" in n and "per running sequence" in n for n in arch.notes)


def test_qwen3_next_layout_is_three_deltanet_then_one_attention():
    arch = arch_of("Qwen/Qwen3-Next-80B-A3B-Thinking")
    assert arch.layer_kinds == (NONE, NONE, NONE, FULL) * 12
    assert _kv_bf16_per_token(arch) == 24_576  # 12 layers x K+V x 2 heads x 256 x 2 bytes


def test_nemotron_h_mamba2_state_matches_vllm_state_shapes():
    arch = arch_of("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    cfg = models.lookup("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")["config"]
    mix = mixers(cfg, "nemotron_h", arch.layers)
    assert mix is not None
    assert (mix.count(MAMBA2), mix.count(MOE_ONLY), mix.count(ATTENTION)) == (23, 23, 6)
    heads, head_dim, groups, d_state, kernel = 64, 64, 8, 128, 4  # the config's Mamba-2 sizes
    conv = (kernel - 1) * (heads * head_dim + 2 * groups * d_state) * 2  # bf16
    ssm = heads * head_dim * d_state * 4  # mamba_ssm_cache_dtype float32
    assert arch.state_bytes_per_seq == 23 * (conv + ssm)


def test_nemotron_h_spelled_as_layers_block_type_reads_the_same():
    pattern = "M*-E"
    names = ["mamba", "attention", "mlp", "moe"]
    assert mixers({"hybrid_override_pattern": pattern}, "nemotron_h", 4) == mixers(
        {"layers_block_type": names}, "nemotron_h", 4
    )
    assert mixers({"hybrid_override_pattern": pattern}, "nemotron_h", 4) == (
        MAMBA2,
        ATTENTION,
        MLP_ONLY,
        MOE_ONLY,
    )
    assert mixers({"hybrid_override_pattern": "M*"}, "nemotron_h", 3) is None  # length must match


JAMBA_V01 = {  # transformers JambaConfig defaults, which are Jamba-v0.1's sizes
    "architectures": ["JambaForCausalLM"],
    "model_type": "jamba",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 65536,
    "num_experts": 16,
    "num_experts_per_tok": 2,
    "expert_layer_period": 2,
    "expert_layer_offset": 1,
    "attn_layer_period": 8,
    "attn_layer_offset": 4,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "mamba_expand": 2,
    "mamba_dt_rank": 256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 262144,
    "torch_dtype": "bfloat16",
}


def test_jamba_attention_every_eighth_layer_and_paper_figures():
    arch = parse_config(JAMBA_V01, "ai21labs/Jamba-v0.1", "test")
    assert arch.attention_layers == 4 and arch.moe_layers == 16
    assert arch.params / 1e9 == pytest.approx(52.0, rel=0.02)
    kv_256k = _kv_bf16_per_token(arch) * 256 * 1024
    assert kv_256k / 2**30 == pytest.approx(4.0, rel=0.05)  # the paper's 4 GB at 256K tokens
    mix = mixers(JAMBA_V01, "jamba", 32)
    assert mix is not None and mix.count(MAMBA1) == 28
    inner = 2 * 4096
    assert arch.state_bytes_per_seq == 28 * (inner * 3 * 2 + inner * 16 * 2)  # conv + SSM, bf16


def test_deltanet_layers_from_layer_types_or_interval_agree():
    layers = 8
    by_interval = mixers({"full_attention_interval": 4}, "qwen3_next", layers)
    by_types = mixers(
        {
            "layer_types": ["linear_attention"] * 3
            + ["full_attention"]
            + ["linear_attention"] * 3
            + ["full_attention"]
        },
        "qwen3_5_text",
        layers,
    )
    assert by_interval == by_types == (DELTANET, DELTANET, DELTANET, ATTENTION) * 2


def test_a_dense_model_has_no_state_and_every_layer_attends():
    arch = arch_of("meta-llama/Llama-3.1-8B-Instruct")
    assert arch.state_bytes_per_seq == 0 and arch.attention_layers == 32
    assert bytes_per_token_layer(arch, 1, 2.0) * 32 == 131_072  # 32 layers x K+V x 8 heads x 128 x 2 bytes


def test_kimi_k3_kda_and_mla_layers_and_its_published_size():
    """Kimi-K3 (config: github:ai-dynamo/aiconfigurator@efaa0e64 .../moonshotai--Kimi-K3_config.json).
    Baidu AIHC's model page (https://cloud.baidu.com/doc/AIHC/s/hmtl8ixwa) states 2.8T total, 104B
    activated, 93 layers: 69 KDA + 24 gated MLA, latent MoE of 3584, 896 experts, 16 per token, 2
    shared. KDA state (vllm/model_executor/layers/kda.py @01a7e5d9, kda_state_shape / kda_state_dtype):
    q, k, v conv windows of heads x head_dim x (kernel - 1) in bf16, a heads x d x d float32 state."""
    arch = arch_of("moonshotai/Kimi-K3")
    assert arch.family == "kimi_linear" and arch.mla
    assert (arch.attention_layers, len(arch.state_layers), arch.layers) == (24, 69, 93)
    assert arch.layer_kinds[3] == FULL and arch.layer_kinds[0] == NONE  # full_attn_layers count from 1
    assert _kv_bf16_per_token(arch) == 24 * (512 + 64) * 2
    assert arch.state_bytes_per_seq == 69 * (3 * 96 * 128 * 3 * 2 + 96 * 128 * 128 * 4)
    assert arch.params / 1e12 == pytest.approx(2.8, rel=0.01)
    routed_only = 896 * 3 * 3584 * 3072  # the experts work in the 3584-wide latent space
    active = arch.params - arch.moe_layers * routed_only * (1 - 16 / 896)
    assert arch.moe_layers == 92 and active / 1e9 == pytest.approx(104, rel=0.03)


def test_falcon_h1_layers_hold_attention_kv_and_a_mamba2_state_side_by_side():
    """Falcon-H1 (vLLM falcon_h1.py FalconH1ParallelHybrid: every layer feeds its input to self_attn and to
    mamba and sums both). The sizes are Megatron-Bridge's Falcon-H1 500M test fixture
    (github:NVIDIA-NeMo/Megatron-Bridge@067f987d tests/unit_tests/models/falcon_h1/test_falcon_h1_bridge.py,
    FALCON_H1_500M_CONFIG; its docs name tiiuae/Falcon-H1-0.5B-Instruct). The fixture leaves out
    mamba_d_ssm, so it is stated here as 24 heads x 64; the model is not catalogued from it."""
    cfg = {
        "architectures": ["FalconH1ForCausalLM"],
        "model_type": "falcon_h1",
        "hidden_size": 1024,
        "intermediate_size": 2048,
        "num_hidden_layers": 36,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "mamba_d_ssm": 1536,
        "mamba_n_heads": 24,
        "mamba_d_head": 64,
        "mamba_n_groups": 1,
        "mamba_d_state": 128,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "vocab_size": 32784,
        "max_position_embeddings": 16384,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    arch = parse_config(cfg, "t/falcon-h1", "test")
    assert arch.attention_layers == 36 and len(arch.state_layers) == 36
    conv = (1536 + 2 * 1 * 128) * (4 - 1) * 2  # vLLM _get_mamba_cache_shape: conv_dim x (d_conv - 1)
    ssm = 24 * 64 * 128 * 2  # (mamba_n_heads, mamba_d_head, mamba_d_state) in the model dtype
    assert arch.state_bytes_per_seq == 36 * (conv + ssm)
    attention = 1024 * 8 * 64 + 2 * 1024 * 2 * 64 + 8 * 64 * 1024
    assert arch.layer_params[0].attn > attention  # the Mamba-2 mixer's weights come on top
    assert arch.params / 1e9 == pytest.approx(0.5, rel=0.06)
    (kinds,) = stage_kinds(arch, 1)
    assert kinds.count("full") == 36 and kinds.count("mamba") == 36


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"model_type": "kimi_linear", "linear_attn_config": {"kda_layers": [1, "x"]}}, "kda_layers"),
        (
            {"model_type": "kimi_linear", "linear_attn_config": {"kda_layers": [1], "num_heads": "abc"}},
            "num_heads",
        ),
        ({"model_type": "hunyuan", "num_experts": [4, "a"]}, "num_experts"),
        # review: these were priced as if the key were absent (all MLA / no cross-layer sharing / 32 heads)
        ({"model_type": "kimi_linear", "linear_attn_config": {"kda_layers": "1,2"}}, "kda_layers"),
        ({"model_type": "kimi_linear", "linear_attn_config": {"kda_layers": {"a": 1}}}, "kda_layers"),
        ({"model_type": "kimi_linear", "linear_attn_config": [1, 2]}, "kda_layers"),
        (
            {"model_type": "kimi_linear", "linear_attn_config": {"kda_layers": [1], "num_heads": 0}},
            "num_heads",
        ),
        ({"model_type": "hunyuan", "use_cla": True, "cla_share_factor": 0}, "cla_share_factor"),
        ({"model_type": "hunyuan", "use_cla": True, "cla_share_factor": "2"}, "cla_share_factor"),
        ({"model_type": "hunyuan", "use_cla": True, "cla_share_factor": 1.5}, "cla_share_factor"),
        ({"model_type": "hunyuan", "use_cla": True}, "cla_share_factor"),
        ({"model_type": "hunyuan", "num_experts": 8, "moe_topk": ["z"]}, "moe_topk"),
        (
            {"model_type": "hunyuan", "num_experts": 8, "moe_intermediate_size": [32, None]},
            "moe_intermediate_size",
        ),
    ],
)
def test_malformed_per_layer_lists_are_refused_with_the_key_not_guessed(extra, message):
    cfg = {
        "architectures": ["X"],
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "vocab_size": 100,
        "max_position_embeddings": 128,
        **extra,
    }
    with pytest.raises(ValueError, match=message):
        parse_config(cfg, "t/bad", "test")


def test_kv_shared_layers_hold_no_kv_and_gemma4_global_widths_are_refused():
    """num_kv_shared_layers (Gemma 3n / Gemma 4): the last N layers reuse an earlier layer's KV (vLLM gemma4.py
    @001cabc1, kv_sharing_target_layer_name). Gemma 4's full-attention layers have their own head size / KV
    heads; kvlint does not price them yet and says so instead of guessing (google/gemma-4-26B-A4B's config in
    github:ai-dynamo/aiconfigurator@efaa0e64: global_head_dim 512 vs head_dim 256)."""
    pattern = ["sliding_attention"] * 4 + ["full_attention"]
    cfg = {
        "architectures": ["X"],
        "model_type": "gemma3n_text",
        "hidden_size": 256,
        "num_hidden_layers": 10,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "vocab_size": 1000,
        "max_position_embeddings": 4096,
        "sliding_window": 512,
        "layer_types": pattern * 2,
        "num_kv_shared_layers": 4,
    }
    arch = parse_config(cfg, "t/shared", "test")
    assert arch.layer_kinds[6:] == (NONE,) * 4 and arch.attention_layers == 6
    assert parse_config(dict(cfg, num_kv_shared_layers=0), "t/s", "test").attention_layers == 10
    with pytest.raises(ConfigError, match="global_head_dim 512"):
        parse_config(dict(cfg, global_head_dim=512), "t/g", "test")
    with pytest.raises(ConfigError, match="num_global_key_value_heads 1"):
        parse_config(dict(cfg, attention_k_eq_v=True, num_global_key_value_heads=1), "t/g", "test")
