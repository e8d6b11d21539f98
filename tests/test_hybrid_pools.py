"""Hybrid models' fixed state in the engines' pools (kvlint/capacity/state.py).

Each term is checked against the engine's own rule or a figure a public log states, not against
kvlint's constants: vLLM's HybridAttentionMambaModelConfig block-size rule, its KV-cache groups and
MambaSpec's one page per request (vllm-project/vllm issue #26646), and SGLang's
handle_max_mamba_cache / init_memory (sgl-project/sglang@001ccef0 model_runner_kv_cache_mixin.py).
"""

from __future__ import annotations

import pytest
from catalog_arch import arch_of
from conftest import vllm_settings

from kvlint.capacity import state
from kvlint.capacity.kv import MAMBA, blocks_per_request, cdiv, group_layers
from kvlint.catalog.gpus import lookup as lookup_gpu
from kvlint.engines.sglang import plan as sglang
from kvlint.engines.vllm import plan as vllm
from kvlint.engines.vllm import state as vllm_state
from kvlint.record import replace

QWEN3_NEXT = "Qwen/Qwen3-Next-80B-A3B-Thinking"


def test_qwen3_next_state_page_and_groups_reproduce_a_public_vllm_log():
    """vllm-project/vllm#26646 (Qwen3-Next-80B-A3B-Instruct, an int4 AutoRound copy: same layer
    geometry as the catalogued Thinking twin; tensor_parallel 2, max_model_len 215,040) logs
    "GPU KV cache size: 90,048 tokens" and "Maximum concurrency for 215,040 tokens per request: 1.66x".
    The issue is about an fp8 KV cache; with one byte per value the figures follow from kvlint's
    state page, vLLM's block rule, 4 groups and one state block per group and request."""
    arch = arch_of(QWEN3_NEXT)
    assert state.layer_state_bytes(arch, 2) == 548_864  # conv 4,096 x 3 x 2 B + 16 x 128 x 128 x 2 B
    block, note = vllm_state.vllm_block_size(arch, 2, 1.0, 16)
    assert block == 16 * cdiv(548_864, 16 * 512) == 1072 and "1072 tokens" in note
    groups = group_layers(state.stage_kinds(arch, 1)[0], hybrid=True)
    assert groups.group_size == 12 and dict(groups.groups) == {"full": 1, MAMBA: 3}
    need = sum(n * blocks_per_request(kind, 215_040, block, None, 8192) for kind, n in groups.groups)
    assert need == cdiv(215_040, 1072) + 3
    fits = [
        nb
        for nb in range(1, 2000)
        if nb // groups.num_groups * block == 90_048 and f"{nb / need:.2f}" == "1.66"
    ]
    assert fits == [338, 339]
    # with a 16-bit cache neither figure can come out of one pool (the block would be 544 tokens)
    assert 90_048 % vllm_state.vllm_block_size(arch, 2, 2.0, 16)[0] != 0


def _vllm_settings(arch, **kw):
    return vllm_settings(
        **{"version": "0.11.0", "tp": 4, "max_model_len": 262_144, "max_num_seqs": 1024, **kw}
    )


def test_vllm_hybrid_plan_takes_one_state_block_per_group_and_request():
    arch = arch_of(QWEN3_NEXT)
    gpu = lookup_gpu("H100")
    assert gpu is not None
    p = vllm.plan(arch, gpu, _vllm_settings(arch))
    assert p.block_size == 272  # 16 x cdiv(274,432 B state at TP 4, 16 x 1,024 B)
    assert p.layers_per_block == 12 * 4  # 4 groups of 12 layer slots share one block
    assert p.num_blocks == p.kv_pool // (p.block_size * 1024 * 12)
    assert p.kv_tokens == p.num_blocks // 4 * 272  # _report_kv_cache_config
    assert p.request_units == cdiv(262_144, 272) + 3
    assert p.max_concurrency == pytest.approx((p.num_blocks - 1) / p.request_units)
    assert p.kv_per_token == 12 * 1024  # only the 12 attention layers hold per-token KV
    # short requests: the state slots, not the attention pool, bound the concurrency
    short = vllm.plan(arch, gpu, _vllm_settings(arch, max_model_len=2048))
    assert short.request_units == 8 + 3
    assert short.max_concurrency == pytest.approx((short.num_blocks - 1) / 11)
    assert any("raises the attention block size from 16 to 272" in n for n in p.notes)


def test_a_dense_model_keeps_its_vllm_block_size_and_groups():
    arch = arch_of("meta-llama/Llama-3.1-8B-Instruct")
    gpu = lookup_gpu("H100")
    assert gpu is not None and not state.has_state(arch)
    p = vllm.plan(arch, gpu, _vllm_settings(arch, tp=1, max_model_len=8192))
    assert p.block_size == 16 and p.request_units == 8192 // 16


def _sglang_case(max_running: int):
    """Qwen3-Next on 4 x H100 under SGLang 0.5.3 at mem_fraction_static 0.85 (page size 1)."""
    arch = arch_of(QWEN3_NEXT)
    gpu = lookup_gpu("H100")
    assert gpu is not None
    s = _vllm_settings(arch, engine="sglang", version="0.5.3", generation="-", max_num_seqs=max_running)
    return arch, gpu, replace(s, utilization=0.85, block_size=1, hybrid_kv_cache_manager=False)


def test_sglang_mamba_pool_comes_out_of_the_rest_memory_first():
    arch, gpu, s = _sglang_case(0)
    p = sglang.plan(arch, gpu, s)
    (term,) = [t for t in p.terms if t.label == "Mamba/linear state"]
    # one request's state over the 36 Gated DeltaNet layers at TP 4, the recurrent state in SGLang's default
    # float32 (--mamba-ssm-dtype): 3,072 B of bf16 convolution window + 131,072 x 4 B per layer, the figure
    # sgl-project/sglang#12419 logs (tests/test_sglang_hybrid_logs.py)
    per_req = 536_576 * 36
    rest = p.budget - p.terms[0].bytes
    slots = int(rest * 0.9 / 1.9) // per_req  # mamba_full_memory_ratio 0.9
    assert term.bytes == slots * per_req
    assert p.kv_pool == rest - term.bytes
    assert p.max_num_seqs <= slots // 3  # init_memory: max_mamba_cache_size // 3 with the radix cache on
    # stated slots and the radix cache off: the slots are what is stated, one per running request
    s2 = replace(s, max_num_seqs=64, extra={"disable_radix_cache": True})
    p2 = sglang.plan(arch, gpu, s2)
    (term2,) = [t for t in p2.terms if t.label == "Mamba/linear state"]
    assert term2.bytes == 64 * per_req and p2.max_num_seqs == 64


def test_nemotron_3_nano_parameters_match_the_model_card():
    # NVIDIA-Nemotron-3-Nano-30B-A3B card: "31.6B total parameters" (huggingface.co/nvidia/
    # NVIDIA-Nemotron-3-Nano-30B-A3B-BF16); 23 Mamba-2 layers, 6 attention layers of 52
    arch = arch_of("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert arch.params / 1e9 == pytest.approx(31.6, rel=0.01)
    assert len(arch.state_layers) == 23 and arch.attention_layers == 6


def test_vllm_prefix_caching_gives_each_request_two_state_blocks_from_the_release_that_made_it_default():
    """vLLM 0.28.0 turns prefix caching on for hybrid models (vllm==0.28.0:vllm/engine/arg_utils.py:2650),
    with mamba_cache_mode align: MambaSpec.max_memory_usage_bytes is then 2 pages per request and group."""
    arch = arch_of(QWEN3_NEXT)
    gpu = lookup_gpu("H100")
    assert gpu is not None
    need = cdiv(262_144, 272)
    assert vllm.plan(arch, gpu, _vllm_settings(arch, version="0.26.0")).request_units == need + 3
    newest = vllm.plan(arch, gpu, _vllm_settings(arch, version=None))
    assert newest.request_units == need + 2 * 3
    assert any("mamba_cache_mode align (vLLM default: vllm==0.28.0" in n for n in newest.notes)
    off = _vllm_settings(arch, version=None, extra={"enable_prefix_caching": False})
    assert vllm.plan(arch, gpu, off).request_units == need + 3
    on = _vllm_settings(arch, version="0.26.0", extra={"enable_prefix_caching": True})
    assert vllm.plan(arch, gpu, on).request_units == need + 2 * 3
    every_block = _vllm_settings(arch, extra={"mamba_cache_mode": "all"})
    assert vllm.plan(arch, gpu, every_block).request_units == need + 3 * need


def test_the_prefix_caching_flags_reach_the_vllm_plan(tmp_path):
    from conftest import lint

    text = """apiVersion: v1
kind: Pod
metadata: {name: q3n}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    args: [--model, Qwen/Qwen3-Next-80B-A3B-Thinking, --tensor-parallel-size, "4", --max-model-len, "32768",
           --no-enable-prefix-caching, --mamba-cache-mode, align]
    resources: {limits: {nvidia.com/gpu: 4}}
"""
    result = lint(text, str(tmp_path / "pod.yaml"))
    assert result.deployments, result.findings
    r = result.deployments[0]
    assert r.settings is not None and r.plan is not None
    assert r.settings.extra["enable_prefix_caching"] is False
    assert r.settings.extra["mamba_cache_mode"] == "align"  # the stated mode wins
    assert r.plan.request_units == cdiv(32_768, r.plan.block_size) + 2 * 3


def test_sglang_speculative_decoding_reserves_the_draft_tokens_intermediate_states_first():
    """model_runner_kv_cache_mixin.handle_max_mamba_cache (@001ccef0): with a speculative algorithm,
    mamba_cache_per_req x max_running_requests x speculative_num_draft_tokens comes out of the rest first."""
    arch, gpu, s = _sglang_case(32)
    plain = sglang.plan(arch, gpu, s)
    spec = sglang.plan(
        arch, gpu, replace(s, extra={"speculative_algorithm": "EAGLE", "speculative_num_draft_tokens": 4})
    )
    per_req = 536_576 * 36  # the recurrent state in float32, as above
    reserve = per_req * 32 * 4
    (t0,) = [t for t in plain.terms if t.label == "Mamba/linear state"]
    (t1,) = [t for t in spec.terms if t.label == "Mamba/linear state"]
    rest = plain.budget - plain.terms[0].bytes
    assert t1.bytes == reserve + int((rest - reserve) * 0.9 / 1.9) // per_req * per_req
    assert t1.bytes > t0.bytes and spec.kv_tokens < plain.kv_tokens


def test_vllm_v0_takes_the_mamba_cache_for_max_num_seqs_out_of_the_kv_memory():
    """vLLM V0 (mamba_cache.py @078a836d, MambaCacheManager): states for (Mamba layers, max_num_seqs padded
    to a CUDA-graph size) allocated during the profile run; attention KV stays paged in 16-token blocks."""
    arch = arch_of(QWEN3_NEXT)
    gpu = lookup_gpu("H100")
    assert gpu is not None
    v0 = _vllm_settings(arch, version="0.9.2", generation="V0", max_num_seqs=250)
    p = vllm.plan(arch, gpu, v0)
    (term,) = [t for t in p.terms if t.label == "Mamba/linear state"]
    assert term.bytes == 274_432 * 36 * 256  # 250 padded to 256
    eager = vllm.plan(arch, gpu, replace(v0, enforce_eager=True))
    assert [t.bytes for t in eager.terms if t.label == "Mamba/linear state"] == [274_432 * 36 * 250]
    assert p.block_size == 16 and p.kv_pool == eager.kv_pool - 274_432 * 36 * 6
    assert not [t for t in vllm.plan(arch, gpu, _vllm_settings(arch)).terms if "Mamba" in t.label]
