"""llama.cpp's server (llama-server) and Ollama, which runs llama.cpp's runner: their launch, options,
defaults by release and the buffers they allocate on the GPU (`ENGINE` implements kvlint.engines.base.Engine;
the modules load on first use). plan.py says where each accounting rule is read."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment, Value
from kvlint.engines.base import KvHeadSharding, LongSequence, Startup
from kvlint.engines.llamacpp import launch as _launch
from kvlint.engines.native import Absent, Extra
from kvlint.engines.shared import EngineBase

_NO_FRACTION = "llama.cpp allocates fixed buffers (model, KV cache of -c cells, compute) and no memory share"


class LlamaCpp(EngineBase):
    name = "llamacpp"
    display = "llama.cpp"
    image_words = _launch.IMAGES
    goes_by = {
        # KubeAI's Model `engine: OLlama` (api/k8s/v1/model_types.go ModelSpec.Engine)
        "kubeai": ("ollama",),
        # llmaz's backendName of its llama.cpp and Ollama BackendRuntimes (chart/templates/backends/)
        "llmaz": ("llamacpp", "ollama"),
    }
    native_fields = {
        "gpu_memory_utilization": Absent(_NO_FRACTION, matches=1),
        "max_batched_tokens": Extra("n_batch"),  # -b/--batch-size
        "dtype": Absent("llama.cpp computes in the GGUF file's own tensor types"),
        "quantization": Absent(
            "the GGUF file's type is the weights' quantization (the model's file name states it)"
        ),
        "tensor_parallel": Absent(
            "llama.cpp splits layers over the GPUs it sees (--split-mode layer)", matches=1
        ),
        "pipeline_parallel": Absent(
            "llama.cpp splits layers over the GPUs it sees (--split-mode layer)", matches=1
        ),
        "data_parallel": Absent("one llama-server serves one model", matches=1),
        "block_size": Absent("llama.cpp's KV cache is one tensor of n_ctx cells per layer (no blocks)"),
        "enforce_eager": Absent("CUDA graphs are built per ubatch inside the compute buffer", matches=False),
        "hybrid_kv_cache_manager": Absent(
            "sliding-window layers get the iSWA cache (--swa-full turns it off)"
        ),
    }
    reader = "kvlint.engines.llamacpp.options"
    memory_table = "kvlint.engines.llamacpp.memory_options:table"
    settings_of = "kvlint.engines.llamacpp.plan:settings"
    plan_of = "kvlint.engines.llamacpp.fit:layout"
    release_of = "kvlint.engines.llamacpp.releases:parse_version"
    fraction_field = None
    kv_heads = KvHeadSharding.REPLICATED
    no_kv_memory_says = "failed to allocate buffer for kv cache"
    refuses_context_beyond_model = (
        False  # it warns "n_ctx_seq > n_ctx_train -- possible training context overflow"
    )
    rope_cache_at_load = False  # ggml computes RoPE in the graph; no cos/sin cache is stored
    # with no GPU in the container, ggml's CPU backend serves (every llama.cpp build has it; -ngl has nothing
    # to offload to): weights and KV cache in host memory
    runs_on_cpu_without_gpu = True
    # one process drives every GPU and ggml-cuda copies between them itself: no NCCL, no worker processes
    # (ollama/ollama@v0.15.5 ml/backend/ggml/ggml/src/ggml-cuda calls no NCCL, llama.cpp ec98e2002 vendored)
    gpus_share_memory = False

    entry_point = staticmethod(_launch.entry_point)
    wrapper_entry = staticmethod(_launch.wrapper_entry)
    image_command = staticmethod(_launch.image_command)
    image_entrypoint = staticmethod(_launch.image_entrypoint)
    start_script = staticmethod(_launch.start_script)
    image_version = staticmethod(_launch.image_version)

    def context_fix(self, arch: Any, gpu: Any, s: Any, plan: Any) -> int | None:
        from kvlint.engines.llamacpp import ctx_fix

        if plan.warmup_fails:  # the buffers do not fit: the largest -c that does (ctx_fix.py)
            return ctx_fix.largest(arch, gpu, s, plan)
        return super().context_fix(arch, gpu, s, plan)

    def read(self, d: Deployment, launch: Any, env: dict[str, Any], storage: Any = None) -> None:
        from kvlint.engines.llamacpp import options

        if _launch.is_ollama(launch.how.split(": ", 1)[0]):
            options.read_ollama(d, env, _launch.pulled(launch.script))
            return
        options.read(d, launch.tokens, env)
        if d.image is not None and _launch.cpu_build(str(d.image.value)):
            options.cpu_only(d, str(d.image.value))

    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        """llama.cpp sizes its KV cache from -c at start-up: when it does not fit, the allocation fails and
        llama-server exits (llama-kv-cache.cpp:188 "failed to allocate buffer for kv cache"). A context left unset
        on a build that fits by default is cut instead (autofit.py): the plan's `startup` says so."""
        return LongSequence(Startup.REFUSES, "failed to allocate buffer for kv cache")


ENGINE = LlamaCpp()
