"""The KQ masks in llama.cpp's compute buffer (kvlint/engines/llamacpp/compute.py): every layer reads them, so they
live through the whole graph, FFN included; a sliding-window model (Gemma 2/3, gpt-oss) reads a second one over
its SWA cache's cells (llama-graph.cpp build_attn_inp_kv_iswa), and with flash attention both are F16 casts."""

from __future__ import annotations

from conftest import gpu_pod, lint

from kvlint.engines.llamacpp import layers as L

IMAGE = "ghcr.io/ggml-org/llama.cpp:server-cuda-b6500"
GEMMA = "/m/gemma-3-12b-it-Q4_K_M.gguf"  # 48 layers, 5 of each 6 sliding over a 1024-token window


def _compute(*args: str) -> tuple[int, str]:
    (d,) = lint(gpu_pod(IMAGE, ["-m", GEMMA, "-ub", "512", *args])).deployments
    term = next(t for t in d.plan.terms if t.label == "compute buffer")
    return term.bytes, term.note


def test_the_second_mask_spans_the_swa_cache_and_the_whole_context_with_swa_full():
    window, note = _compute("-c", "32768", "-fa", "off")
    full, _ = _compute("-c", "32768", "-fa", "off", "--swa-full")
    assert "attention scores" in note
    # one slot (the build's default): the SWA cache holds a window and a ubatch
    (d,) = lint(gpu_pod(IMAGE, ["-m", GEMMA, "-c", "32768", "-fa", "off"])).deployments
    assert d.settings.max_num_seqs == 1
    swa_cells = L.window_cells(d.model, 32768, False, 1, 512, d.settings.extra["pad"])
    assert swa_cells < 32768
    assert full - window == (32768 - swa_cells) * 512 * 4  # F32 without flash attention


def test_with_flash_attention_the_f16_masks_live_through_the_ffn():
    # 40 of 48 layers offloaded: the output layer stays on the CPU, so the FFN phase is the largest
    short, note = _compute("-c", "8192", "-fa", "on", "-ngl", "40")
    long, _ = _compute("-c", "16384", "-fa", "on", "-ngl", "40")
    assert note.endswith("the FFN (F32)")
    # the full-attention mask grows with the context (F16); the SWA mask's window does not
    assert long - short == (16384 - 8192) * 512 * 2
