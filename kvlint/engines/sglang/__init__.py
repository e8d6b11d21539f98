"""SGLang: its launch, options, defaults by release and memory plan (`ENGINE` implements
kvlint.engines.base.Engine; the modules load on first use)."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment, Value
from kvlint.engines.base import LongSequence, Startup
from kvlint.engines.native import Extra
from kvlint.engines.sglang import launch as _launch
from kvlint.engines.shared import EngineBase


class SGLang(EngineBase):
    name = "sglang"
    # --tp-size and --pp-size default to 1 whatever the pod has (settings.py)
    sizes_from_gpu_count = False
    display = "SGLang"
    image_words = _launch.IMAGES
    # kvlint's own fields (the ServingSpec's, vLLM's names) SGLang keeps under its own option (engines/native.py)
    native_fields = {
        # server_args.py ServerArgs: mem_fraction_static is the share of the memory free before loading that
        # weights and the KV pool may take (sglang/plan.py explains the arithmetic)
        "gpu_memory_utilization": Extra("mem_fraction_static"),
        # --chunked-prefill-size: the tokens one prefill step runs (kvlint's EngineSettings.max_batched_tokens)
        "max_batched_tokens": Extra("chunked_prefill_size"),
        "enforce_eager": Extra("disable_cuda_graph"),
        "hybrid_kv_cache_manager": Extra("disable_hybrid_swa_memory", invert=True),
    }
    reader = "kvlint.engines.sglang.options"
    memory_table = "kvlint.engines.sglang.memory_options:table"
    settings_of = "kvlint.engines.sglang.settings:settings"
    plan_of = "kvlint.engines.sglang.plan:plan"
    release_of = "kvlint.engines.sglang.defaults:parse_version"
    fraction_field = "mem_fraction_static"

    entry_point = staticmethod(_launch.entry_point)
    image_entrypoint = staticmethod(_launch.image_entrypoint)
    image_version = staticmethod(_launch.image_version)

    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        return LongSequence(Startup.CAPS)  # it starts; a request that long is never scheduled

    def replica_dp(self, d: Deployment, dp: int) -> int:
        """DP attention splits the TP group's GPUs (attention TP = tp / dp): a replica is TP x PP."""
        dp_attention = d.extra.get("enable_dp_attention")
        return 1 if dp_attention is not None and dp_attention.value else dp

    def indexer_keys(self, arch: Any, plan: Any) -> bool:
        from kvlint.engines.sglang.dsa import dsa_indexer_bytes

        return bool(dsa_indexer_bytes(arch))


ENGINE = SGLang()
