"""The -c a fix offers when llama.cpp's buffers do not fit: the largest number of cells whose model, compute and
KV buffers llama-server can allocate, found on llama.cpp's own plan at each length (fit.py), so a sliding-window
model's cache (window-sized layers) and the compute buffer's growth with the context are counted as llama.cpp
allocates them. The slots keep their number: without a unified cache each of the `-np` slots gets -c / np cells
(plan.py), so -c steps by np padded slots."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.llamacpp import autofit, fit
from kvlint.engines.llamacpp import layers as L


def largest(arch: ModelArch, gpu: GpuSpec, s: EngineSettings, failed: Plan) -> int | None:
    """The largest -c (every slot's cells) that fits where `failed` does not; None when it fits already, for
    Ollama (its scheduler moves layers to the CPU instead) or when not even one padded cell run per slot fits."""
    if not failed.warmup_fails or s.extra.get("ollama"):
        return None
    step = max(1, s.block_size)

    def fits(k: int) -> bool:
        return not fit.layout(arch, gpu, autofit.at_length(s, k * step)).warmup_fails

    low, high = 0, L.pad(int(s.extra["n_ctx_seq"]), step) // step  # fits(low) or low == 0; not fits(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return int(autofit.at_length(s, low * step).extra["n_ctx"]) if low > 0 else None
