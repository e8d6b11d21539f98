"""LoRA serving in vLLM: what it costs in GPU memory, named and not priced.

With `--enable-lora`, vLLM wraps the model's linear layers and, for each, preallocates one stacked
A and one B tensor per slice: `max_loras` x `max_lora_rank` x the layer's input size, and
`max_loras` x the output size x `max_lora_rank`, in `lora_dtype` (the model's dtype by default)
(vllm-project/vllm@01235a49 vllm/lora/layers/base_linear.py `create_lora_weights`). Defaults:
`max_loras` 1, `max_lora_rank` 16 (vllm-project/vllm@01230b40 vllm/config/lora.py `LoRAConfig`).
They are allocated before the profile run, so they come out of the KV-cache pool. Which layers are
wrapped (attention, MLP, MoE experts, embeddings, lm_head) and how each slice is sharded depend on
the model class and `--fully-sharded-loras`, which kvlint does not model: the cost is named, not
priced, and the pool kvlint shows is larger than vLLM's by that amount.

SGLang reserves GPU buffers for `--max-loras-per-batch` adapters (default 8; "this argument can affect
the amount of GPU memory reserved for multi-LoRA serving", docs.sglang.io/advanced_features/lora.html),
sized by `--max-lora-rank` (default: the largest rank of the adapters it loads): named the same way.
"""

from __future__ import annotations

from typing import Any

DEFAULT_MAX_LORAS = 1  # vllm/config/lora.py LoRAConfig.max_loras
DEFAULT_MAX_LORA_RANK = 16  # vllm/config/lora.py LoRAConfig.max_lora_rank
SOURCE = "vllm/lora/layers/base_linear.py create_lora_weights; defaults vllm/config/lora.py"


def _setting(extra: dict[str, Any], key: str, default: int, flag: str, engine: str = "vLLM") -> str:
    value = extra.get(key)
    return f"{flag} {value}" if value is not None else f"{flag} {default} ({engine} default)"


SGLANG_DEFAULT_MAX_LORAS_PER_BATCH = 8  # docs.sglang.io LoRA serving: "Defaults to be 8"
SGLANG_SOURCE = "docs.sglang.io/advanced_features/lora.html"


def _named(adapters: list[tuple[str, str]]) -> str:
    if not adapters:
        return ""
    shown = ", ".join(f"{name}={ref}" if name else ref for name, ref in adapters)
    return f" serving adapter(s) {shown} on the base model;"


def note(extra: dict[str, Any], engine: str = "vllm") -> str:
    """The memory note for a plan whose deployment enables LoRA, or ''."""
    enabled = extra.get("enable_lora")
    adapters = extra.get("lora_adapters") or []
    if not enabled and not adapters:
        return ""
    if engine == "sglang":
        per_batch = _setting(
            extra,
            "max_loras_per_batch",
            SGLANG_DEFAULT_MAX_LORAS_PER_BATCH,
            "--max-loras-per-batch",
            "SGLang",
        )
        rank = extra.get("max_lora_rank")
        rank_text = f"--max-lora-rank {rank}" if rank is not None else "the adapters' largest rank"
        return (
            f"LoRA enabled:{_named(adapters)} SGLang reserves adapter buffers for {per_batch} at {rank_text} "
            f"({SGLANG_SOURCE}); not priced here, so the KV pool is smaller than shown by that amount"
        )
    loras = _setting(extra, "max_loras", DEFAULT_MAX_LORAS, "--max-loras")
    rank = _setting(extra, "max_lora_rank", DEFAULT_MAX_LORA_RANK, "--max-lora-rank")
    return (
        f"LoRA enabled:{_named(adapters)} vLLM preallocates, for each LoRA-wrapped linear layer, {loras} x "
        f"{rank} x (input + output size) values in the model dtype before its profile run ({SOURCE}); not "
        "priced here, so the KV-cache pool is smaller than shown by that amount"
    )
