"""llama.cpp's --fit: with -c left unset, a cache of the training context that does not fit is cut to what does.

From the builds whose default -c is 0 (the training context), llama-server and llama-cli call llama_params_fit
before loading (`fit_params = true`, a margin of `fit_params_target` 1 GiB per device, no context below
`fit_params_min_ctx` 4096: ollama/ollama@v0.15.5 llama/llama.cpp/common/common.h:335-337, llama.cpp ec98e2002
vendored). When the projected use leaves less than the margin free and n_ctx is 0, step 2 cuts the context by
the deficit over the context memory per cell (`bytes_per_ctx = sum_projected_ctx / hp_nct`, src/llama.cpp:225-
257, "context size reduced from %u to %u"); a context set by the user is kept ("context size set by user ...
no change"). Step 3, moving layers to the CPU when even the minimum context does not fit, is not modelled: the
plan then stays a failure.
"""

from __future__ import annotations

from collections.abc import Callable

from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.engines.base import LongSequence, Startup
from kvlint.engines.llamacpp import layers as L
from kvlint.record import replace
from kvlint.units import GIB, tokens

MARGIN = 1 * GIB  # common.h:336 fit_params_target = 1024*1024*1024
MIN_CTX = 4096  # common.h:337 fit_params_min_ctx


def at_length(s: EngineSettings, seq: int) -> EngineSettings:
    """The settings with `seq` cells per slot, set by the user (no --fit cut): -c is every slot's cells, or the
    one shared stream's under a unified cache (plan.py)."""
    cells = seq if s.extra["unified"] else seq * max(1, s.max_num_seqs)
    return replace(s, max_model_len=seq, extra=dict(s.extra, n_ctx=cells, n_ctx_seq=seq, ctx_fit=False))


def shrunk(
    arch: ModelArch,
    gpu: GpuSpec,
    s: EngineSettings,
    failed: Plan,
    layout: Callable[..., Plan],
    kv: int,
    deficit: int,
) -> Plan | None:
    """The plan llama.cpp starts with after --fit cut the context, or None when the cut does not make it fit:
    `kv` is the KV cache of every GPU, `deficit` the memory short of the margin on them all."""
    n_ctx = int(s.extra["n_ctx"])
    if kv <= 0 or n_ctx <= MIN_CTX:
        return None
    per_cell = kv / n_ctx
    cut = min(-(-int(deficit) // max(1, int(per_cell))), n_ctx - MIN_CTX)
    new_ctx = n_ctx - cut
    unified, n_seq = bool(s.extra["unified"]), max(1, s.max_num_seqs)
    seq = L.pad(new_ctx, s.block_size) if unified else L.pad(new_ctx // n_seq, s.block_size)
    p = layout(arch, gpu, at_length(s, seq))
    if p.warmup_fails:
        return None
    says = f"llama_params_fit_impl: context size reduced from {n_ctx} to {new_ctx}"
    p.startup = LongSequence(Startup.SHRINKS, says, seq)
    p.request_bytes, p.request_units, p.max_model_len = (
        failed.request_bytes,
        failed.request_units,
        failed.max_model_len,
    )
    p.notes.append(
        f"--fit (on by default) cuts the unset context to {tokens(seq)} so the buffers fit with its 1 GiB"
        f" margin ({says})"
    )
    p.lines.append(f"  --fit: {says} (the training context's cache does not fit)")
    return p


__all__ = ["MARGIN", "MIN_CTX", "at_length", "shrunk"]
