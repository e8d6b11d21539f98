"""Each term of the engine accounting on small synthetic configs, against hand-computed figures,
and the calibration benchmark's verdicts (every logged refusal to start predicted, none invented)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT, shared, vllm_settings

from kvlint.capacity.plan import EngineSettings
from kvlint.capacity.weights import weights
from kvlint.catalog.gpus import GpuSpec
from kvlint.catalog.hf_config import parse_config
from kvlint.engines.tgi import plan as tgi
from kvlint.engines.tgi.defaults import Settled
from kvlint.engines.vllm import plan as vllm

GIB = 1 << 30

TINY = {  # 4 layers, 8 heads of 64, 2 KV heads, vocab 1,000, untied, bf16
    "model_type": "llama",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "num_hidden_layers": 4,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
GPU = GpuSpec("test", "Test GPU 10 GiB", "nvidia", 10 * GIB, "test", None, (9, 0), True, True)


def arch(**overrides):
    return parse_config({**TINY, **overrides}, "test/tiny", "test")


def settings(**kw) -> EngineSettings:
    return vllm_settings(
        **{"version": "0.19.0", "max_model_len": 4096, "max_num_seqs": 16, "max_batched_tokens": 2048, **kw}
    )


def test_parameter_count_by_hand():
    a = arch()
    attn = 512 * 512 + 2 * 512 * 128 + 512 * 512  # q, k, v (2 KV heads x 64), o
    mlp = 3 * 512 * 1024
    norms = 2 * 512
    assert a.params == 1000 * 512 * 2 + 4 * (attn + mlp + norms) + 512


def test_weights_include_the_rope_cache_and_vocab_padding():
    a = arch()
    w = weights(a, tp=1, pp=1)
    rope = 4096 * 64 * 2  # max_position_embeddings x head_dim x bf16 (vLLM builds one cos/sin cache per GPU)
    padded_vocab = 1024  # 1,000 rounded up to a multiple of 64
    body = 4 * ((512 * 512 * 2 + 2 * 512 * 128) + 3 * 512 * 1024 + 2 * 512)
    assert w.per_gpu_max == rope + 2 * padded_vocab * 512 * 2 + body * 2 + 512 * 2


def test_tp_splits_linear_layers_and_vocab_but_replicates_norms_and_rope():
    a = arch()
    w2 = weights(a, tp=2, pp=1).per_gpu_max
    rope = 4096 * 64 * 2
    vocab_rows = 512  # ceil(1000 / (64 x 2)) x 64
    linear = 4 * ((512 * 512 * 2 + 2 * 512 * 128) + 3 * 512 * 1024) // 2
    assert w2 == rope + 2 * vocab_rows * 512 * 2 + linear * 2 + 4 * 2 * 512 * 2 + 512 * 2


def test_mxfp4_experts_are_padded_like_vllm_marlin():
    moe = arch(
        model_type="gpt_oss",
        num_local_experts=4,
        num_experts_per_tok=2,
        intermediate_size=1000,
        quantization_config={"quant_method": "mxfp4"},
    )
    w = weights(moe, tp=1, pp=1)
    inter, hidden = 1024, 512  # 1,000 -> multiple of 128; 512 is already a multiple of 256
    experts = 4 * (3 * inter * hidden * 4.25 / 8 + (2 * inter + hidden) * 2)
    unpadded = weights(moe, tp=1, pp=1).per_gpu_max - 4 * experts
    assert unpadded > 0 and int(4 * experts) <= w.per_gpu_max


@pytest.mark.parametrize(
    ("qc", "bits"),
    [
        ({"quant_method": "fp8", "weight_block_size": [128, 128]}, 8 + 32 / 16384),
        ({"quant_method": "awq", "bits": 4, "group_size": 128}, 4 + 20 / 128),
        ({"quant_method": "gptq", "bits": 4, "group_size": 128}, 4 + 20 / 128),
        ({"quant_method": "mxfp4"}, 4.25),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {
                    "g": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128}}
                },
            },
            4 + 16 / 128,
        ),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"g": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel"}}},
            },
            8,
        ),
    ],
)
def test_quantized_weight_bits(qc, bits):
    assert arch(quantization_config=qc).quant.bits == pytest.approx(bits)


def test_moe_adds_fused_moe_caches():
    dense = vllm.activation_bytes(arch(), settings(max_num_seqs=2048), 2)[0]
    moe_arch = arch(model_type="mixtral", num_local_experts=8, num_experts_per_tok=2)
    moe = vllm.activation_bytes(moe_arch, settings(max_num_seqs=2048), 2)[0]
    assert moe - dense == 2048 * 2 * (max(2 * 1024, 512) + 1024) * 2


def test_pool_blocks_and_null_block():
    a = arch()
    p = vllm.plan(a, GPU, settings())
    assert p.kv_pool == p.budget - sum(t.bytes for t in p.terms)
    page = 16 * 2 * 2 * 64 * 2  # block x K,V x 2 KV heads x head_dim x bf16
    assert p.page_bytes == page and p.num_blocks == p.kv_pool // (page * 4)
    assert p.kv_tokens == p.num_blocks * 16
    need = 4096 // 16
    assert p.max_concurrency == pytest.approx((p.num_blocks - 1) / need)  # V1 keeps one null block


def test_cuda_graphs_subtracted_from_021_and_never_when_eager():
    a = arch()
    old = vllm.plan(a, GPU, settings(subtract_cuda_graphs=False))
    new = vllm.plan(a, GPU, settings(subtract_cuda_graphs=True))
    eager = vllm.plan(a, GPU, settings(subtract_cuda_graphs=True, enforce_eager=True))
    assert new.kv_pool < old.kv_pool == eager.kv_pool
    assert new.term("CUDA graphs") > 0 and eager.term("CUDA graphs") == 0


def test_v0_profile_has_no_v1_sampler():
    a = arch()
    v0 = vllm.activation_bytes(a, settings(generation="V0", max_batched_tokens=4096), 2)[0]
    assert v0 == 4096 * (3 * 1024 + 3 * 512) * 2 + 16 * 1000 * 4


def test_pipeline_stages_the_tightest_binds():
    a = arch(num_hidden_layers=6)
    p = vllm.plan(a, GPU, settings(pp=2))
    assert len(p.stage_pools) == 2
    assert p.stage == 1  # the last stage holds lm_head and runs the sampler
    assert p.kv_pool == min(p.stage_pools)


def test_cpu_offload_frees_weight_memory():
    a = arch()
    base = vllm.plan(a, GPU, settings())
    off = vllm.plan(a, GPU, settings(extra={"cpu_offload_gb": 0.001}))
    assert base.weights_per_gpu - off.weights_per_gpu == int(0.001 * GIB)


def test_fp8_kv_and_mla_per_token():
    a = arch()
    assert (
        vllm.plan(a, GPU, settings(kv_cache_dtype="fp8")).kv_per_token * 2
        == vllm.plan(a, GPU, settings()).kv_per_token
    )
    mla = arch(
        model_type="deepseek_v3", kv_lora_rank=64, qk_rope_head_dim=16, qk_nope_head_dim=32, v_head_dim=32
    )
    p = vllm.plan(mla, GPU, settings(tp=2))
    assert p.kv_per_token == 4 * (64 + 16) * 2  # one latent per layer, not split by TP


def test_tgi_caps_default_total_tokens_to_the_pool():
    a = arch()
    s = settings(
        engine="tgi",
        generation="-",
        utilization=1.0,
        block_size=1,
        max_model_len=4096,
        version="3.3.7",
        own=Settled(total_default=True),  # max_total_tokens left to the warm-up
    )
    p = tgi.plan(a, GPU, s)
    assert p.budget == int(GPU.engine_bytes * 1.0 * 0.9)  # TGI_WIGGLE_ROOM 0.90 from v3.3
    assert p.max_model_len == min(4096, p.kv_tokens)
    assert p.weights_limit == GPU.engine_bytes  # weights load into the whole fraction


def test_calibration_verdicts_stay_at_100_percent():
    calib = shared("calibration", "vllm_startup_logs.yaml")
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "accuracy.py"), "--vllm", str(calib)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("vllm") and " fit " in x)
    verdict = next(x for x in lines[at:] if x.strip().startswith("verdicts"))
    agree, total = verdict.split()[1].split("/")
    assert int(total) >= 20 and agree == total, out.stdout
