"""SGLang's hybrid models: the mamba state pool it takes before the KV pool (kvlint/capacity/state.py says
what the state is).

`profile_max_num_token` prices the cell over the full-attention layers only, then takes the state pool out
of the rest memory first (`handle_max_mamba_cache`); the KV pool is what is left. How many state slots, by
release (data/releases.json `mamba_pool`, each row citing the wheel's lines):
- fixed (up to v0.5.3): the radix cache is off; `--max-mamba-cache-size`, else `--max-running-requests`,
  else 512 slots.
- ratio (v0.5.4-v0.5.6): with the radix cache on, `rest x r / (1 + r)` in whole slots, r =
  `--mamba-full-memory-ratio` (0.9), a stated size overwritten, and with speculative decoding every slot
  holds 1 + draft tokens states; with it off (stated, or a Mamba-2 model) as `fixed`.
- stated (v0.5.7-v0.5.8): a stated size, or the radix cache off, as `fixed`; else the ratio, after
  `max_running_requests x speculative_num_draft_tokens` intermediate states.
- auto (v0.5.9 on): the stated size; else, the radix cache off, the stated max_running_requests; else the
  ratio (no 512 default).
Then `init_memory` caps max_running_requests at slots // 3 with the radix cache on
(MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO), slots // 1 with it off.

One slot is a request's state over the stage's state layers, its SSM / recurrent part at `--mamba-ssm-dtype`:
float32 by default (sglang==0.5.2:sglang/srt/server_args.py:396; from v0.5.9 a config's `mamba_ssm_dtype`
first, sglang==0.5.9:sglang/srt/configs/mamba_utils.py:47-105), its convolution window at bfloat16
(CONV_DTYPE). The pool allocates one padding slot more than it counts (sglang==0.5.4:
sglang/srt/mem_cache/memory_pool.py:167-176, `size + 1`), memory the profile did not take from the KV pool.
"""

from __future__ import annotations

from kvlint.capacity.kv import cdiv
from kvlint.catalog.arch import ModelArch
from kvlint.record import record

SGLANG_MAMBA_FULL_MEMORY_RATIO = 0.9  # ServerArgs.mamba_full_memory_ratio default
SGLANG_MAMBA_REQUEST_RATIO = 3  # MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO (radix cache on)
FIXED_SLOTS = 512  # the size with neither stated, up to v0.5.8
SSM_WIDTH = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0}


@record(frozen=True)
class MambaPool:
    """SGLang's mamba pool on one GPU: what it takes before the KV pool and what it allows."""

    bytes: int  # taken from the rest memory before the KV pool (slots, and any draft-token states)
    slots: int  # max_mamba_cache_size, as "Mamba Cache is allocated" logs it
    cap: int  # max_running_requests at most (slots // ratio)
    per_req: int  # one slot's bytes (every state layer of the stage)
    radix: bool  # the radix cache is on (the cap's ratio is 3)


def ssm_width(arch: ModelArch, extra: dict, mamba_pool: str) -> float:
    """Bytes per element of the SSM state as SGLang keeps it: --mamba-ssm-dtype, else (v0.5.9 on) the
    config's mamba_ssm_dtype, else float32."""
    stated = SSM_WIDTH.get(str(extra.get("mamba_ssm_dtype") or "").lower())
    if stated:
        return stated
    if mamba_pool == "auto" and arch.state_ssm_elems and arch.state_ssm_width == 2.0 and _config_narrow(arch):
        return 2.0
    return 4.0


def _config_narrow(arch: ModelArch) -> bool:
    """The config states mamba_ssm_dtype bfloat16 / float16 (SGLang reads that key, not vLLM's
    mamba_ssm_cache_dtype)."""
    cfg: dict = arch.parsed_from[0] if arch.parsed_from and isinstance(arch.parsed_from[0], dict) else {}
    nested = cfg.get("text_config")
    text: dict = nested if isinstance(nested, dict) else cfg
    return str(text.get("mamba_ssm_dtype") or cfg.get("mamba_ssm_dtype") or "").lower() in (
        "bfloat16",
        "float16",
    )


def slot_bytes(arch: ModelArch, tp: int, layers: int, width: float) -> int:
    """One request's state over `layers` state layers on one GPU, its SSM part at `width` bytes."""
    if not arch.state_layers or not arch.state_bytes_per_seq:
        return 0
    per_seq = arch.state_bytes_per_seq + int(arch.state_ssm_elems * (width - arch.state_ssm_width))
    return cdiv(per_seq // len(arch.state_layers), max(1, tp)) * layers


def sglang_state(
    arch: ModelArch,
    tp: int,
    layers: int,
    rest: int,
    extra: dict,
    running: int,
    mamba_pool: str,
    radix_off: bool,
) -> MambaPool:
    """SGLang's mamba pool. `layers`: stateful layers on the stage; `rest`: the memory left after the
    weights; `running`: the stated max_running_requests (0 when not stated); `mamba_pool`: the release's
    rule; `radix_off`: the release turns the radix cache off for this model."""
    per_req = slot_bytes(arch, tp, layers, ssm_width(arch, extra, mamba_pool))
    if not per_req:
        return MambaPool(0, 0, 0, 0, True)
    radix = not (radix_off or extra.get("disable_radix_cache"))
    stated = extra.get("max_mamba_cache_size")
    stated = stated if isinstance(stated, int) and stated > 0 else 0
    drafts = extra.get("speculative_num_draft_tokens")
    drafts = drafts if extra.get("speculative_algorithm") and isinstance(drafts, int) else 0
    spec = per_req * running * drafts if mamba_pool in ("stated", "auto") else 0  # intermediate states
    fixed = stated or running or (FIXED_SLOTS if mamba_pool != "auto" else 0)
    if mamba_pool == "fixed" or (not radix and mamba_pool != "auto") or (mamba_pool == "stated" and stated):
        slots = fixed
    elif mamba_pool == "auto" and (stated or (not radix and running)):
        slots = stated or running
    else:
        ratio = float(extra.get("mamba_full_memory_ratio") or SGLANG_MAMBA_FULL_MEMORY_RATIO)
        per_slot = per_req * (1 + drafts if mamba_pool == "ratio" else 1)
        slots = int(max(0, rest - spec) * ratio / (1 + ratio)) // per_slot
    taken = slots * per_req * (1 + drafts if mamba_pool == "ratio" else 1) + spec
    return MambaPool(taken, slots, slots // (SGLANG_MAMBA_REQUEST_RATIO if radix else 1), per_req, radix)
