"""LoRA serving in SGLang: what it costs in GPU memory, named and not priced.

SGLang reserves GPU buffers for `--max-loras-per-batch` adapters (default 8; "this argument can affect
the amount of GPU memory reserved for multi-LoRA serving", docs.sglang.io/advanced_features/lora.html),
sized by `--max-lora-rank` (default: the largest rank of the adapters it loads): named, not priced
(kvlint/engines/vllm/lora.py says the same for vLLM).
"""

from __future__ import annotations

from typing import Any

from kvlint.engines.shared import adapters_named, lora_adapters, setting_shown

SGLANG_DEFAULT_MAX_LORAS_PER_BATCH = 8  # docs.sglang.io LoRA serving: "Defaults to be 8"
SGLANG_SOURCE = "docs.sglang.io/advanced_features/lora.html"


def note(extra: dict[str, Any]) -> str:
    """The memory note for a plan whose deployment enables LoRA, or ''."""
    adapters = lora_adapters(extra.get("enable_lora"), extra.get("lora_adapters"))
    if adapters is None:
        return ""
    per_batch = setting_shown(
        extra,
        "max_loras_per_batch",
        SGLANG_DEFAULT_MAX_LORAS_PER_BATCH,
        "--max-loras-per-batch",
        "SGLang",
    )
    rank = extra.get("max_lora_rank")
    rank_text = f"--max-lora-rank {rank}" if rank is not None else "the adapters' largest rank"
    return (
        f"LoRA enabled:{adapters_named(adapters)} SGLang reserves adapter buffers for {per_batch} at {rank_text} "
        f"({SGLANG_SOURCE}); not priced here, so the KV pool is smaller than shown by that amount"
    )
