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
"""

from __future__ import annotations

from typing import Any

from kvlint.engines.shared import adapters_named, lora_adapters, setting_shown

DEFAULT_MAX_LORAS = 1  # vllm/config/lora.py LoRAConfig.max_loras
DEFAULT_MAX_LORA_RANK = 16  # vllm/config/lora.py LoRAConfig.max_lora_rank
SOURCE = "vllm/lora/layers/base_linear.py create_lora_weights; defaults vllm/config/lora.py"


def note(extra: dict[str, Any]) -> str:
    """The memory note for a plan whose deployment enables LoRA, or ''."""
    adapters = lora_adapters(extra.get("enable_lora"), extra.get("lora_adapters"))
    if adapters is None:
        return ""
    loras = setting_shown(extra, "max_loras", DEFAULT_MAX_LORAS, "--max-loras")
    rank = setting_shown(extra, "max_lora_rank", DEFAULT_MAX_LORA_RANK, "--max-lora-rank")
    return (
        f"LoRA enabled:{adapters_named(adapters)} vLLM preallocates, for each LoRA-wrapped linear layer, {loras} x "
        f"{rank} x (input + output size) values in the model dtype before its profile run ({SOURCE}); not "
        "priced here, so the KV-cache pool is smaller than shown by that amount"
    )
