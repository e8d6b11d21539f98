"""Hugging Face TGI: its launch, options, defaults by release and memory plan (`ENGINE` implements
kvlint.engines.base.Engine; the modules load on first use).

Its llama.cpp backend lives here too (llamacpp.py, llamacpp_kv.py, data/llamacpp_memory_options.json): TGI's
launcher and router start it, chosen by the image (backends.py), so it is one of TGI's backends, not an
engine a deployment names.
"""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment, InForce, Value
from kvlint.engines.base import BatchCheck, KvHeadSharding, LongSequence, Refusal, Startup
from kvlint.engines.native import Absent, Extra
from kvlint.engines.shared import EngineBase
from kvlint.engines.tgi import launch as _launch

_ARGS = "launcher/src/main.rs Args"


class TGI(EngineBase):
    name = "tgi"
    display = "TGI"
    image_words = _launch.IMAGES
    # kvlint's own fields (the ServingSpec's, vLLM's names): where TGI keeps them, or that it has none
    native_fields = {
        "gpu_memory_utilization": Extra(
            "cuda_memory_fraction"
        ),  # --cuda-memory-fraction / CUDA_MEMORY_FRACTION
        "max_batched_tokens": Extra("max_batch_prefill_tokens"),  # the warm-up's prefill budget
        "pipeline_parallel": Absent(f"the launcher shards tensors only (--num-shard; {_ARGS})", matches=1),
        "data_parallel": Absent(f"one launcher serves one replica ({_ARGS})", matches=1),
        "block_size": Absent(
            "the attention backend sets the block size (server/text_generation_server/models/globals.py "
            "BLOCK_SIZE, by ATTENTION)"
        ),
        "enforce_eager": Absent(
            f"--cuda-graphs 0 turns CUDA graphs off ({_ARGS}), which kvlint's plan leaves out", matches=False
        ),
        "hybrid_kv_cache_manager": Absent("every layer keeps KV for every token", matches=False),
    }
    reader = "kvlint.engines.tgi.options"
    memory_table = "kvlint.engines.tgi.memory_options:table"
    settings_of = "kvlint.engines.tgi.plan:settings"
    plan_of = "kvlint.engines.tgi.plan:plan"
    release_of = "kvlint.engines.tgi.releases:parse_version"
    fraction_field = "cuda_memory_fraction"
    kv_heads = KvHeadSharding.SHARDED  # `num_key_value_heads` must be divisible by `num_shards`
    kv_split_says = "`num_key_value_heads` must be divisible by `num_shards`"
    batch_checks = frozenset({BatchCheck.ROUTER_LIMITS})
    refuses_context_beyond_model = (
        False  # its launcher does not derive the model's maximum (KV204 is vLLM's/SGLang's)
    )
    rope_cache_at_load = (
        False  # PositionRotaryEmbedding grows its cache with the longest forward (capacity/weights.py)
    )

    entry_point = staticmethod(_launch.entry_point)
    image_command = staticmethod(_launch.image_command)
    image_entrypoint = staticmethod(_launch.image_entrypoint)
    image_version = staticmethod(_launch.image_version)

    def read_options(
        self,
        d: Deployment,
        tokens: list[Any],
        env: dict[str, Any],
        positional_model: bool = True,
        strict: bool = True,
        unknown: tuple[str, str] | None = None,
        argv: bool = True,
    ) -> None:
        from kvlint.engines.tgi import options

        options.read(d, tokens, env)

    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        """The router refuses a stated max_total_tokens above the batch total its warm-up inferred
        (backends/v3/src/main.rs); with its own default it starts and never schedules such a request."""
        if max_context is None or max_context.origin == "default":
            return LongSequence(Startup.CAPS)
        from kvlint.engines.tgi.releases import tgi_router_refusal

        return LongSequence(Startup.REFUSES, tgi_router_refusal(version_text, int(max_context.value)))

    def parallelism_refusal(self, d: Deployment, in_force: InForce) -> Refusal | None:
        """launcher/src/main.rs find_num_shards: --sharded true needs 2+ shards."""
        sharded, tp = d.extra.get("sharded"), in_force.tensor_parallel
        if sharded is None or sharded.value is not True or not tp or tp.value > 1:
            return None
        return Refusal(
            f"TGI --sharded true with {tp.value} shard ({tp.note or 'stated'}): "
            'TGI cannot start ("`sharded` is true but `num_shard` <= 1" / "only found 1 CUDA devices")',
            "drop --sharded true, or give the container 2+ GPUs and --num-shard to match",
            (sharded, tp),
        )

    def online_quant(self, name: str) -> Any:
        from kvlint.engines.tgi.plan import BNB8

        return BNB8 if name == "bitsandbytes" else None  # layers/bnb.py Linear8bitLt

    def request_units(self, arch: Any, gpu: Any, s: Any, tokens: int) -> int:
        """Token slots: the router allocates a request's input plus max_new_tokens (plus speculate - 1) when it
        admits it (huggingface/text-generation-inference backends/v3/src/queue.rs next_batch @v3.3.4), whatever
        max_total_tokens (a limit, by default the whole pool: plan.py _max_total) allows."""
        return tokens

    def backend_kv(self, d: Deployment, arch: Any) -> str | None:
        """The llama.cpp backend's KV cache on the GPU(s) (llamacpp_kv.py)."""
        from kvlint.engines.tgi.llamacpp import kv_settings
        from kvlint.engines.tgi.llamacpp_kv import kv_on_gpu

        priced = kv_on_gpu(arch, *kv_settings(d))
        return priced[1] if priced else None


ENGINE = TGI()
