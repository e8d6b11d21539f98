"""What SGLang logs as a hybrid model's capacity, and what KV102/KV103 count (engines/sglang/state.py).

SGLang keeps a linear-attention / Mamba model's state in a pool of per-request slots apart from the KV pool:
"Mamba Cache is allocated. max_mamba_cache_size: N" is the slots, "KV Cache is allocated. #tokens: T" and
"max_total_num_tokens=T" the full-attention layers' tokens. One request may use all T tokens (its state takes
one slot whatever its length), so KV102 and KV103 count T; the running requests are capped by the slots
(init_memory: max_num_reqs <= slots // 3 with the radix cache on, // 1 with it off).

Logs (public, the figures quoted in benchmarks/calibration/sglang_startup_logs.yaml):
- sgl-project/sglang#12419 (s-066): Qwen3-Next-80B-A3B, TP 4, v0.5.4 on AMD's 192 GB card, radix cache on:
  "max_mamba_cache_size: 2914, conv_state size: 1.20GB, ssm_state size: 51.24GB",
  "#tokens: 5091015, K size: 29.13 GB";
- sgl-project/sglang#10407 (s-065): Qwen3-Next, TP 4, v0.5.2 on H20: "Load weight begin. avail mem=93.46 GB",
  "#tokens: 2896645, K size: 16.57 GB".
"""

from __future__ import annotations

import json

import pytest
from catalog_arch import arch_of
from conftest import lint

from kvlint.engines.sglang import state

QWEN3_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
GIB = 1 << 30


def _spec(version: str, gpu: str, extra: str = "", model: str = QWEN3_NEXT, tp: int = 4) -> str:
    return (
        f"kind: ServingSpec\nname: hybrid\nengine: sglang\nengine_version: '{version}'\nmodel: {model}\n"
        f"gpu: {gpu}\ngpus: {tp}\ntensor_parallel: {tp}\n{extra}"
    )


def _pod(version: str, args: list[str], product: str = "NVIDIA-H200", tp: int = 4) -> str:
    """SGLang's launch_server in a pod: the options as the engine reads them."""
    words = ["python3", "-m", "sglang.launch_server", "--model-path", QWEN3_NEXT, "--tp", str(tp), *args]
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        f"      nodeSelector: {{nvidia.com/gpu.product: {product}}}\n      containers:\n"
        f"      - name: server\n        image: lmsysorg/sglang:v{version}\n        command: {json.dumps(words)}\n"
        f"        resources: {{limits: {{nvidia.com/gpu: {tp}}}}}\n"
    )


def _plan(text: str):
    r = lint(text)
    assert len(r.deployments) == 1 and r.deployments[0].plan is not None
    return r.deployments[0].plan


def test_one_slot_is_the_state_sglang_logs_with_its_float32_ssm_default():
    """2,915 slots (2,914 and the padding one, memory_pool.py:167-176) x 36 layers at TP 4: conv 2,048 x 3 x
    2 B per layer = 1.20 GiB, ssm 8 x 128 x 128 x 4 B = 51.24 GiB. kvlint's catalog prices the config's dtype
    (bfloat16: the checkpoint states no mamba_ssm_dtype); SGLang keeps the SSM state in float32."""
    arch = arch_of(QWEN3_NEXT)
    conv = state.slot_bytes(arch, 4, 36, 0.0)  # the SSM part at zero width: the convolution window alone
    f32 = state.slot_bytes(arch, 4, 36, 4.0)
    assert f"{2915 * conv / GIB:.2f}" == "1.20"
    assert f"{2915 * (f32 - conv) / GIB:.2f}" == "51.24"
    assert state.slot_bytes(arch, 4, 36, 2.0) == arch.state_bytes_per_seq // 4  # the catalog's own width
    assert state.ssm_width(arch, {}, "ratio") == 4.0
    assert state.ssm_width(arch, {"mamba_ssm_dtype": "bfloat16"}, "auto") == 2.0


def test_the_v0_5_4_split_is_the_mamba_full_memory_ratio_of_the_logged_pools():
    """The memory both logged pools take, split again by v0.5.4's rule, gives the logged slots and tokens."""
    arch = arch_of(QWEN3_NEXT)
    per_req = state.slot_bytes(arch, 4, 36, 4.0)
    cell = 12 * 2 * 256 * 2  # 12 full-attention layers x K,V x 1 KV head per rank x 256 x 2 B
    assert f"{5_091_015 * cell // 2 / GIB:.2f}" == "29.13"  # the logged K size
    rest = 5_091_015 * cell + 2914 * per_req
    pool = state.sglang_state(arch, 4, 36, rest, {}, 0, "ratio", radix_off=False)
    assert pool.slots == 2914 and (rest - pool.bytes) // cell == 5_091_015
    assert pool.cap == 2914 // 3 and pool.radix


def test_a_v0_5_2_plan_reproduces_the_tokens_its_fixed_512_slots_leave():
    """v0.5.2 turns the radix cache off and sizes 512 slots (model_runner.py:308-326); with them, on an H20
    at TP 4, the plan's full-attention tokens are the logged 2,896,645 within 2 %."""
    p = _plan(_spec("0.5.2", "H20"))
    assert p.state_slots == 512 and p.state_cap == 512
    assert p.kv_per_token == 12 * 2 * 256 * 2
    assert p.kv_tokens == pytest.approx(2_896_645, rel=0.02)
    newer = _plan(_spec("0.5.9", "H20"))  # the 0.9 ratio: far more slots, far fewer tokens
    assert newer.state_slots > 512 and newer.kv_tokens < p.kv_tokens * 0.8


@pytest.mark.parametrize(
    ("version", "slots_stated_kept"),
    [("0.5.3", True), ("0.5.4", False), ("0.5.7", True), ("0.5.9", True)],
)
def test_a_stated_max_mamba_cache_size_is_kept_except_by_v0_5_4_to_v0_5_6_with_the_radix_cache(
    version, slots_stated_kept
):
    """v0.5.4-v0.5.6 overwrite a stated size with the ratio while the radix cache is on
    (model_runner.py:1453-1468); v0.5.3 (the radix cache off) and v0.5.7 on keep it."""
    p = _plan(_pod(version, ["--max-mamba-cache-size", "300"]))
    assert (p.state_slots == 300) is slots_stated_kept


def test_v0_5_4_runs_a_mamba2_model_without_the_radix_cache_and_v0_5_7_with_it():
    """'NemotronHConfig model detected, disable radix cache' (v0.5.4-v0.5.6): 512 slots, one per request;
    v0.5.7 keeps the radix cache (sgl-project/sglang PR 13584): the ratio, a third of the slots each."""
    nemotron = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
    old = _plan(_spec("0.5.4", "H100", model=nemotron, tp=1))
    new = _plan(_spec("0.5.7", "H100", model=nemotron, tp=1))
    assert old.state_slots == 512 and old.state_cap == 512
    assert new.state_cap == new.state_slots // 3 and new.state_slots != 512


def test_the_stated_mamba_options_reach_the_plan():
    """--mamba-ssm-dtype bfloat16 halves the SSM part of a slot; --mamba-full-memory-ratio moves the split."""
    base = _plan(_pod("0.5.9", []))
    bf16 = _plan(_pod("0.5.9", ["--mamba-ssm-dtype", "bfloat16"]))
    (t0,) = [t for t in base.terms if t.label == "Mamba/linear state"]
    (t1,) = [t for t in bf16.terms if t.label == "Mamba/linear state"]
    arch = arch_of(QWEN3_NEXT)
    assert (
        f"{state.slot_bytes(arch, 4, 36, 2.0):,} B" in t1.note and bf16.state_slots > 1.9 * base.state_slots
    )
    assert t0.bytes == pytest.approx(t1.bytes, rel=0.001)  # the same ratio of the rest memory
    half = _plan(_pod("0.5.9", ["--mamba-full-memory-ratio", "0.45"]))
    assert half.state_slots < base.state_slots and half.kv_tokens > base.kv_tokens


def test_kv103_names_the_state_slots_that_cap_the_running_requests():
    """A stated --max-running-requests above slots // 3: SGLang runs the cap, and KV103 counts that many."""
    text = _spec("0.5.9", "H200", "max_context: 262144\nmax_sequences: 1000\n", tp=2)
    r = lint(text)
    p = r.deployments[0].plan
    assert p.max_num_seqs == p.state_cap == p.state_slots // 3 < 1000
    (f,) = [f for f in r.findings if f.rule == "KV103"]
    assert f.message.startswith(
        f"1,000 sequences stated, but SGLang runs at most {p.state_cap:,} at once, what its "
        f"{p.state_slots:,} state slots allow: {p.state_cap:,} sequences of 262,144 tokens"
    )
    assert f"{p.kv_tokens:,} tokens of its attention layers, all usable by one request" in f.message


def test_kv102_counts_the_attention_layers_tokens_one_request_may_use():
    args = ["--context-length", "262144", "--mem-fraction-static", "0.5"]
    r = lint(_pod("0.5.9", args, product="NVIDIA-H100-80GB-HBM3"))
    (f,) = [f for f in r.findings if f.rule == "KV102"]
    p = r.deployments[0].plan
    assert p.max_len_that_fits == p.kv_tokens < 262_144
    assert (
        f"({p.kv_tokens:,} tokens of its attention layers, all usable by one request; its 36 state layers"
        in (f.message)
    )


def test_a_qwen3_5_slot_and_cell_are_the_sizes_its_log_gives():
    """kvcache-ai/ktransformers#1870 (s-067, ktransformers' SGLang build, Qwen3.5-397B-A17B at TP 2): "conv_state
    size: 0.13GB, ssm_state size: 7.29GB" for 82 slots and the padding one, the config's float32
    mamba_ssm_dtype; "#tokens: 580364, K size: 4.15 GB" over the 15 full-attention layers."""
    arch = arch_of("Qwen/Qwen3.5-397B-A17B")
    width = state.ssm_width(arch, {}, "auto")
    conv, slot = state.slot_bytes(arch, 2, 45, 0.0), state.slot_bytes(arch, 2, 45, width)
    assert (f"{83 * conv / GIB:.2f}", f"{83 * (slot - conv) / GIB:.2f}") == ("0.13", "7.29")
    assert f"{580_364 * arch.attention_layers * 1 * arch.head_dim * 2 / GIB:.2f}" == "4.15"
