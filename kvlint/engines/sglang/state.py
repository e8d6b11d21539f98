"""SGLang's hybrid models: the mamba state pool it takes before the KV pool (kvlint/capacity/state.py says
what the state is).

SGLang (sgl-project/sglang@001ccef0 python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py):
- `profile_max_num_token` prices the cell over the full-attention layers only, then
  `handle_max_mamba_cache` takes the state pool out of the rest memory first: `--max-mamba-cache-size`
  slots when stated; else, with the radix cache disabled and max_running_requests stated, that many;
  else `rest x r / (1 + r)` with r = mamba_full_memory_ratio (ServerArgs default 0.9), in whole slots
  of `mamba_cache_per_req` bytes. The KV pool is what is left.
- With speculative decoding, `handle_max_mamba_cache` first sets aside `mamba_cache_per_req x
  max_running_requests x speculative_num_draft_tokens` for the draft tokens' intermediate states.
- `init_memory` caps max_running_requests at `max_mamba_cache_size // ratio`, ratio 1 with the radix
  cache disabled, else MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3 (`calculate_mamba_ratio`).
"""

from __future__ import annotations

from kvlint.capacity.state import layer_state_bytes
from kvlint.catalog.arch import ModelArch

SGLANG_MAMBA_FULL_MEMORY_RATIO = 0.9  # ServerArgs.mamba_full_memory_ratio default
SGLANG_MAMBA_REQUEST_RATIO = 3  # MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO (radix cache on)


def sglang_state(
    arch: ModelArch, tp: int, layers: int, rest: int, extra: dict, running: int
) -> tuple[int, int, int]:
    """(state bytes taken from the rest memory, state slots, request cap) of SGLang's mamba pool.

    `layers`: stateful layers on the stage; `rest`: the memory left after the weights;
    `running`: the stated max_running_requests (0 when not stated)."""
    per_req = layer_state_bytes(arch, tp) * layers
    if not per_req:
        return 0, 0, 0
    # speculative decoding first reserves the intermediate states of every draft token of every request
    drafts = extra.get("speculative_num_draft_tokens")
    spec = per_req * running * drafts if extra.get("speculative_algorithm") and isinstance(drafts, int) else 0
    rest -= spec
    radix_off = bool(extra.get("disable_radix_cache"))
    stated = extra.get("max_mamba_cache_size")
    if isinstance(stated, int) and stated > 0:
        slots = stated
    elif radix_off and running > 0:
        slots = running
    else:
        ratio = float(extra.get("mamba_full_memory_ratio") or SGLANG_MAMBA_FULL_MEMORY_RATIO)
        slots = int(max(0, rest) * ratio / (1 + ratio)) // per_req
    cap = slots // (1 if radix_off else SGLANG_MAMBA_REQUEST_RATIO)
    return slots * per_req + spec, slots, cap
