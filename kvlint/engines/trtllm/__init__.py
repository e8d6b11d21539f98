"""TensorRT-LLM (trtllm-serve, its PyTorch backend by default from 1.0; NVIDIA Dynamo's TensorRT-LLM worker):
its launch, options, defaults by release and the KV cache it sizes on the GPU (`ENGINE` implements
kvlint.engines.base.Engine; the modules load on first use). fit.py says where each accounting rule is read."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment, Value
from kvlint.engines.base import KvHeadSharding, LongSequence, Startup
from kvlint.engines.native import Absent
from kvlint.engines.shared import EngineBase
from kvlint.engines.trtllm import launch as _launch


class TensorRTLLM(EngineBase):
    name = "trtllm"
    # --tp_size and --pp_size default to 1 (plan.py; tensorrt_llm/commands/serve.py); a built engine has its own
    sizes_from_gpu_count = False
    display = "TensorRT-LLM"
    script_word = "trtllm"
    image_words = _launch.IMAGES
    # llmaz's backendName of its TensorRT-LLM BackendRuntime (InftyAI/llmaz chart/templates/backends/tensorrt-llm.yaml)
    goes_by = {"llmaz": ("tensorrt-llm",)}
    native_fields = {
        "data_parallel": Absent(
            "TensorRT-LLM serves one model per trtllm-serve; its attention DP (enable_attention_dp) splits TP",
            matches=1,
        ),
        "enforce_eager": Absent(
            "the PyTorch backend captures CUDA graphs from cuda_graph_config (an LLM-API option)",
            matches=False,
        ),
        "hybrid_kv_cache_manager": Absent(
            "TensorRT-LLM sizes sliding-window layers from max_attention_window (an LLM-API option)",
            matches=False,
        ),
    }
    reader = "kvlint.engines.trtllm.options"
    memory_table = "kvlint.engines.trtllm.memory_options:table"
    settings_of = "kvlint.engines.trtllm.plan:settings"
    plan_of = "kvlint.engines.trtllm.fit:layout"
    release_of = "kvlint.engines.trtllm.releases:parse_version"
    fraction_field = "gpu_memory_utilization"
    kv_heads = KvHeadSharding.REPLICATED
    refuses_context_beyond_model = False  # it takes the max_seq_len it is given (and shrinks it to the pool)
    rope_cache_at_load = False

    entry_point = staticmethod(_launch.entry_point)
    wrapper_entry = staticmethod(_launch.wrapper_entry)
    image_entrypoint = staticmethod(_launch.image_entrypoint)
    start_script = staticmethod(_launch.start_script)
    image_version = staticmethod(_launch.image_version)

    def read(self, d: Deployment, launch: Any, env: dict[str, Any], storage: Any = None) -> None:
        from kvlint.engines.trtllm import options

        if _launch.is_triton(launch.how):
            from kvlint.engines.trtllm import repository

            return repository.read_launch(d, launch)
        if launch.wrapper == "script":
            return options.not_modelled(d, options.SCRIPT, "trtllm-script")
        tokens = launch.tokens
        if tokens and tokens[0].text.startswith("disaggregated"):
            return options.not_modelled(d, options.DISAGGREGATED, "trtllm-router")
        if launch.wrapper == "dynamo":
            options.read_dynamo(d, tokens, env)
        else:
            options.read(d, tokens, env)
        backend = d.extra.get("backend")
        if backend is not None and str(backend.value).lower() == "_autodeploy":
            options.not_modelled(d, options.AUTODEPLOY, "trtllm-autodeploy", engine_not_modelled=True)

    def read_options(
        self, d, tokens, env, positional_model=True, strict=True, unknown=None, argv=True
    ) -> None:
        from kvlint.engines.trtllm import options

        options.read(d, tokens, env, strict=strict, argv=argv)
        options.read_file(d, None)  # another input kind's args: no mounted file to read

    def option_files(self, d: Deployment) -> tuple[str, ...]:
        path = d.extra.get("llm_api_options")
        if path is None or "unsupported" in d.extra or not str(path.value).strip():
            return ()
        return (str(path.value),)

    def read_option_file(self, d: Deployment, path: str, found: Any) -> None:
        from kvlint.engines.trtllm import options

        options.read_file(d, found)

    def option_folders(self, d: Deployment) -> tuple[str, ...]:
        from kvlint.engines.trtllm.repository import KEY

        path = d.extra.get(KEY)
        return () if path is None or "unsupported" in d.extra else (str(path.value),)

    def read_option_folder(self, d: Deployment, path: str, folder: Any) -> None:
        from kvlint.engines.trtllm import repository

        repository.read_folder(d, folder)

    def knob_for(self, field: str, s: Any) -> str | None:
        """Under Triton, the config.pbtxt parameter or trtllm-build option that sets the field
        (repository.KNOBS; None for one neither sets); else trtllm-serve's option."""
        from kvlint.engines.trtllm.repository import KEY, KNOBS

        if KEY in (getattr(s, "extra", None) or {}):
            return KNOBS.get(field)
        return self.flag_for(field)

    def online_quant(self, name: str) -> Any:
        """A stated precision as TensorRT-LLM's weight quantization (QuantConfig.quant_algo, the precision of a
        NIM TensorRT-LLM profile); a checkpoint's own hf_quant_config wins (capacity.weights.effective_quant)."""
        from kvlint.engines.trtllm.quant import quant_of

        return quant_of(name)

    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        """The PyTorch backend bounds max_seq_len by the blocks the pool holds and starts
        (resource_manager.py get_max_atten_window_upper_bound; "Adjusted max_seq_len to N"): the length it
        starts with is the plan's `max_len_that_fits`."""
        return LongSequence(Startup.SHRINKS, "Adjusted max_seq_len to")


ENGINE = TensorRTLLM()
