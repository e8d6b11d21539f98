"""LMDeploy (InternLM/lmdeploy): `lmdeploy serve api_server` on its TurboMind or PyTorch engine; its launch,
options, defaults by release and KV cache (`ENGINE` implements kvlint.engines.base.Engine; the modules load
on first use). plan.py says where each accounting rule is read."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Value
from kvlint.engines.base import KvHeadSharding, LongSequence, Startup
from kvlint.engines.lmdeploy import launch as _launch
from kvlint.engines.native import Absent, Extra
from kvlint.engines.shared import EngineBase

_TP_ONLY = (
    "LMDeploy splits a model by tensor parallelism only (--tp; TurboMind FT_CHECK(pipeline_para_size_ == 1))"
)


class LMDeploy(EngineBase):
    name = "lmdeploy"
    # --tp defaults to 1 whatever the pod has (settings.py; lmdeploy/cli/utils.py ArgumentHelper.tp)
    sizes_from_gpu_count = False
    display = "LMDeploy"
    image_words = _launch.IMAGES
    script_word = "lmdeploy"
    # kvlint's own fields (the ServingSpec's, vLLM's names): where LMDeploy keeps them, or that it has none
    native_fields = {
        # --cache-max-entry-count: the share of the memory free after the weights the KV cache takes (plan.py)
        "gpu_memory_utilization": Extra("cache_max_entry_count"),
        "max_batched_tokens": Extra("max_prefill_token_num"),
        "enforce_eager": Extra("eager_mode"),  # --eager-mode: the PyTorch engine without CUDA graphs
        "pipeline_parallel": Absent(_TP_ONLY, matches=1),
        "quantization": Absent(
            "it loads the checkpoint's own format (--model-format hf, awq, gptq, fp8 names it,"
            " lmdeploy/turbomind/deploy/converter.py) and quantizes no weights at load"
        ),
        "hybrid_kv_cache_manager": Absent(
            "TurboMind keeps every attention layer's KV for every token of a session", matches=False
        ),
    }
    reader = "kvlint.engines.lmdeploy.options"
    memory_table = "kvlint.engines.lmdeploy.memory_options:table"
    settings_of = "kvlint.engines.lmdeploy.settings:settings"
    plan_of = "kvlint.engines.lmdeploy.plan:plan"
    release_of = "kvlint.engines.lmdeploy.releases:parse_version"
    fraction_field = "cache_max_entry_count"
    # from v0.7.0; before, SHARDED (kv_head_sharding reads the release's row in data/releases.json)
    kv_heads = KvHeadSharding.REPLICATED
    kv_split_says = "assert self.model_config.kv_head_num % self.tensor_para_size == 0"
    refuses_context_beyond_model = False  # a --session-len above the model's is taken as given
    rope_cache_at_load = False  # TurboMind computes RoPE in its attention kernels

    entry_point = staticmethod(_launch.entry_point)
    image_version = staticmethod(_launch.image_version)

    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        """TurboMind's answer by release; the plan carries the length it shrinks to and the PyTorch engine's
        answer (plan.py long_sequence, Plan.startup), which KV102 reads first."""
        from kvlint.engines.lmdeploy.releases import default

        if default("long_sequence", version_text).value == "shrinks":
            return LongSequence(Startup.SHRINKS, "session_len truncated to the KV cache's tokens")
        return LongSequence(Startup.CAPS, "cache out of memory, no request can be admitted")

    def online_quant(self, name: str) -> Any:
        return None

    def kv_head_sharding(self, version_text: str | None) -> KvHeadSharding:
        """TurboMind's converter refused a TP the KV heads do not divide by before v0.7.0, and from it repeats
        each head when TP is a multiple of their count (data/releases.json `kv_heads`)."""
        from kvlint.engines.lmdeploy.releases import default

        return KvHeadSharding(default("kv_heads", version_text).value)

    def smaller_kv(self, version_text: str | None) -> tuple[str, str] | None:
        """--quant-policy fp8 from v0.14.0 (messages.py QuantPolicy); before, the int8 cache, written 8
        (lmdeploy/cli/utils.py ArgumentHelper.quant_policy `type=int, choices=[0, 4, 8]`)."""
        from kvlint.engines.lmdeploy.releases import default

        return ("fp8", "fp8") if 16 in list(default("kv_policies", version_text).value) else ("int8", "8")  # type: ignore[call-overload]


ENGINE = LMDeploy()
