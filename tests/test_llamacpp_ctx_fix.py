"""KV102's fix for llama.cpp when its buffers do not fit (kvlint/engines/llamacpp/ctx_fix.py): the largest -c
whose buffers llama-server allocates, found on llama.cpp's own plan, so it holds for a sliding-window model and
for -np slots; the fix re-lints clean and one step more does not."""

from __future__ import annotations

import pytest
from conftest import gpu_pod, lint

IMAGE = "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500"
OLD = "ghcr.io/ggml-org/llama.cpp:server-cuda-b4000"  # before the unified cache: -np slots split -c
GEMMA = "/m/gemma-3-27b-it-Q4_K_M.gguf"  # 5 of each 6 layers slide over a 1024-token window
QWEN = "/m/Qwen2.5-14B-Instruct-Q4_K_M.gguf"


def _kv102(image: str, model: str, ctx: int, *more: str):
    text = gpu_pod(image, ["-m", model, "-c", str(ctx), "-ngl", "99", *more])
    text = text.replace("NVIDIA-H100-80GB-HBM3", "NVIDIA-L4")
    result = lint(text)
    return [f for f in result.findings if f.rule == "KV102"], result


def _offered(f) -> int:
    assert f.fix.startswith("set --ctx-size ") and f.fix.endswith("(the largest that fits)")
    return int(f.fix.split()[2])


@pytest.mark.parametrize(
    ("image", "model", "ctx", "more"),
    [(IMAGE, GEMMA, 65536, ()), (OLD, QWEN, 131072, ("-np", "4")), (IMAGE, QWEN, 131072, ())],
)
def test_the_offered_context_fits_and_one_step_more_does_not(image, model, ctx, more):
    (f,), result = _kv102(image, model, ctx, *more)
    assert "the buffers do not fit" in f.message
    (r,) = result.deployments
    s = r.settings
    step = s.block_size * (1 if s.extra["unified"] else max(1, s.max_num_seqs))
    offered = _offered(f)
    assert 0 < offered < ctx and offered % step == 0
    assert not _kv102(image, model, offered, *more)[0]
    assert _kv102(image, model, offered + step, *more)[0]


def test_a_sliding_window_model_is_offered_more_than_its_per_token_bytes_suggest():
    # each cell of the full-attention layers is the only cost that grows with -c: dividing the memory left by
    # the bytes of one cell of every layer would offer far less
    (f,), result = _kv102(IMAGE, GEMMA, 65536)
    (r,) = result.deployments
    assert _offered(f) > 2 * r.plan.max_len_that_fits


def test_the_unsafe_fix_writes_the_offered_context():
    (f,), _ = _kv102(IMAGE, GEMMA, 65536)
    (edit,) = [x for x in f.fixes if "--ctx-size" in x.message]
    assert edit.edits and edit.edits[0].text == str(_offered(f))
