"""vLLM's multimodal encoder profile (kvlint/engines/vllm/encoder.py) against start-up logs.

The logs: llm-d-incubation/llm-d-planner PR #205 (commit d3121e059da8), accuracy/results/v0.19.0/logs/,
vLLM 0.19.0 on H100 80GB HBM3, gpu_memory_utilization 0.95, max_model_len 8192, defaults otherwise:
- google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192.log: 'torch peak memory increase: 3.99GiB',
  'Available KV cache memory: 19.53 GiB';
- mistralai-Mistral-Small-3.1-24B-Instruct-2503--h100-80gb--tp1pp1dp1--8192.log: 'torch peak memory
  increase: 2.03GiB', 'Available KV cache memory: 28.19 GiB'.
"""

from __future__ import annotations

import json

import pytest
from catalog_arch import arch_of
from conftest import vllm_settings

from kvlint.catalog.gpus import lookup as lookup_gpu
from kvlint.engines.vllm import plan as vllm
from kvlint.record import replace

GIB = 1 << 30


def _plan(model: str, **kw):
    s = vllm_settings(**{"version": "0.19.0", "max_num_seqs": 1024, "utilization": 0.95, **kw})
    return vllm.plan(arch_of(model), lookup_gpu("NVIDIA H100 80GB HBM3"), s)


def _act(p) -> tuple[float, str]:
    term = next(t for t in p.terms if t.label == "activation peak")
    return term.bytes / GIB, term.note


@pytest.mark.parametrize(
    ("model", "peak", "kv"),
    [("google/gemma-3-27b-it", 3.99, 19.53), ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", 2.03, 28.19)],
)
def test_v1_encoder_profile_is_in_the_logged_peak(model, peak, kv):
    """The dummy image batch and its embeddings stay alive through the text dummy forward (vllm==0.19.0
    gpu_model_runner.py:5764-5784): with them the peak and the pool are the logged ones, without them not."""
    with_encoder = _plan(model)
    text_only = _plan(model, extra={"skip_mm_profiling": True})
    act, note = _act(with_encoder)
    assert abs(act - peak) / peak < 0.02 and "V1 encoder profile" in note
    assert abs(with_encoder.kv_pool / GIB - kv) / kv < 0.005
    assert (peak - _act(text_only)[0]) / peak > 0.04  # the text profile alone misses it


def test_a_limit_of_zero_turns_the_encoder_profile_off():
    """encoder_budget.py:73-77: a modality of limit 0 passes no encoder; every one 0, no profile at all."""
    off = _plan("google/gemma-3-27b-it", extra={"limit_mm_per_prompt": json.dumps({"image": 0})})
    skipped = _plan("google/gemma-3-27b-it", extra={"skip_mm_profiling": True})
    assert _act(off) == _act(skipped) and "encoder" not in _act(off)[1]


def test_the_batch_follows_the_encoder_budget():
    """items = budget // tokens, budget = max_num_batched_tokens (scheduler.py:234-235): a quarter of the
    batched tokens, a quarter of the images; a limit of 1 per prompt still allows one image per request."""
    full = _act(_plan("google/gemma-3-27b-it"))[1]
    small = _act(_plan("google/gemma-3-27b-it", max_batched_tokens=2048))[1]
    one = _act(_plan("google/gemma-3-27b-it", extra={"limit_mm_per_prompt": '{"image": 1}'}))[1]
    assert "32 x one 896x896 image" in full and "8 x one 896x896 image" in small
    assert "32 x one 896x896 image" in one  # 1,024 requests x 1 image, still capped by the budget


def test_qwen_profiles_its_largest_video():
    """qwen2_vl.py:820-1030: the video of as many frames as max_model_len holds outweighs the image; with
    videos off (limit 0) the image is profiled."""
    long = _act(_plan("Qwen/Qwen2.5-VL-7B-Instruct", max_model_len=32768))[1]
    images = _act(
        _plan(
            "Qwen/Qwen2.5-VL-7B-Instruct", max_model_len=32768, extra={"limit_mm_per_prompt": '{"video": 0}'}
        )
    )[1]
    assert "a video of 4 frames" in long and "32,768 tokens" in long
    assert "one image at max_pixels" in images and "16,384 tokens" in images


def test_v0_profile_shrinks_the_dummy_sequences_to_the_images_it_feeds():
    """vllm==0.6.3 model_runner.py:1242-1277: max_num_seqs becomes max_num_batched_tokens // max_mm_tokens
    (Qwen2-VL: an image and a video of 1,280 tokens each, limit 1), so the sampler runs on that many rows."""
    gpu = lookup_gpu("NVIDIA H100 80GB HBM3")
    arch = arch_of("Qwen/Qwen2-VL-7B-Instruct")
    s = vllm_settings(version="0.6.3", generation="V0", max_num_seqs=256)
    mm = _act(vllm.plan(arch, gpu, s))
    off = _act(vllm.plan(arch, gpu, replace(s, extra={"limit_mm_per_prompt": '{"image": 0, "video": 0}'})))
    assert "V0 encoder profile: 3 x one image, 1,280 tokens" in mm[1] and "encoder" not in off[1]
    assert mm[0] != off[0]


def test_a_family_kvlint_does_not_size_is_said():
    """Kimi-VL's MoonViT dummy image depends on its preprocessor's in_token_limit (vllm==0.19.0 kimi_vl.py:
    163-197), which kvlint does not read: the plan says the encoder profile is left out, and the peak is the text one."""
    p = _plan("moonshotai/Kimi-VL-A3B-Instruct")
    assert "kimi_vl vision encoder on dummy images, which kvlint does not size" in _act(p)[1]


def test_the_batch_size_rule_follows_the_release():
    """Before 0.10 the encoder budget is divided rounding up (vllm==0.8.5 gpu_model_runner.py:1603); 0.10.0
    rounds down against max_num_seqs x limit (gpu_model_runner.py:2358-2378); from 0.10.1 a prompt also holds
    at most max_model_len // tokens items (vllm==0.10.1.1 vllm/v1/worker/utils.py:104-107)."""

    def items(version: str, **kw) -> str:
        return _act(_plan("google/gemma-3-27b-it", version=version, **kw))[1]

    assert "32 x one" in items("0.8.5", max_batched_tokens=8000)
    assert "31 x one" in items("0.19.0", max_batched_tokens=8000)
    # four requests of one image each (max_model_len 300 holds one 256-token image)
    assert "32 x one" in items("0.10.0", max_num_seqs=4, max_model_len=300)
    assert "4 x one" in items("0.19.0", max_num_seqs=4, max_model_len=300)


def test_data_parallel_encoder_runs_a_share_of_the_batch_on_whole_weights():
    """--mm-encoder-tp-mode data: each TP rank runs ceil(items / TP) items with the whole tower
    (vllm==0.19.0 vision.py:291-306): fewer patches but an unsplit MLP. One Qwen video cannot be shared."""
    from kvlint.engines.vllm import encoder

    def peak(model: str, mode: str) -> int:
        s = vllm_settings(version="0.19.0", tp=4, max_num_seqs=1024, extra={"mm_encoder_tp_mode": mode})
        p = encoder.profile(arch_of(model), s, encoder.ACT_BYTES)
        assert isinstance(p, encoder.EncoderProfile)
        return p.peak

    assert peak("google/gemma-3-27b-it", "data") < peak("google/gemma-3-27b-it", "weights")
    assert peak("Qwen/Qwen2-VL-72B-Instruct", "data") > peak("Qwen/Qwen2-VL-72B-Instruct", "weights")
