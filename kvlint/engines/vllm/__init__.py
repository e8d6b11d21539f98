"""vLLM: its launch, options, defaults by release and memory plan (`ENGINE` implements
kvlint.engines.base.Engine; the modules load on first use)."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment, Value
from kvlint.engines.base import BatchCheck, LongSequence, Startup
from kvlint.engines.shared import EngineBase
from kvlint.engines.vllm import launch as _launch


class VLLM(EngineBase):
    name = "vllm"
    # TP and PP default to 1 whatever the pod has (settings.py: tensor_parallel_size 1, pipeline_parallel_size 1)
    sizes_from_gpu_count = False
    display = "vLLM"
    reader = "kvlint.engines.vllm.options"
    memory_table = "kvlint.engines.vllm.memory_options:table"
    settings_of = "kvlint.engines.vllm.tpu:settings"  # the GPU path (settings.py, plan.py) on a GPU
    plan_of = "kvlint.engines.vllm.tpu:plan"
    release_of = "kvlint.engines.vllm.versions:parse_version"
    fraction_field = "gpu_memory_utilization"
    batch_checks = frozenset({BatchCheck.SCHEDULER_TOKENS})
    no_kv_memory_says = "No available memory for the cache blocks"
    plans_on_tpu = True  # vllm/vllm-tpu: the tpu-inference worker (tpu.py)
    ray_places_workers = True  # --distributed-executor-backend ray: workers are Ray actors over the pods
    models_expert_placement = True  # MoE experts over TP x DP (capacity/weights.py)
    names_fp8_weights_fix = True  # --quantization fp8 quantizes a bf16 checkpoint at load
    script_word = "vllm"
    image_words = _launch.IMAGES
    goes_by = {
        # KServe: runtime and model-format names that carry it (kserve-vllm-runtime, modelFormat vllm)
        "kserve runtime": ("vllm",),
        # KServe's Hugging Face server: `--backend vllm` (python/huggingfaceserver/huggingfaceserver/__main__.py)
        "kserve huggingface backend": ("vllm",),
        # KubeAI's Model `engine: VLLM` (api/k8s/v1/model_types.go ModelSpec.Engine)
        "kubeai": ("vllm",),
        # the llm-d-modelservice chart names its engine container `vllm` (templates/_helpers.tpl)
        "llm-d container": ("vllm",),
    }

    entry_point = staticmethod(_launch.entry_point)
    wrapper_entry = staticmethod(_launch.wrapper_entry)
    image_command = staticmethod(_launch.image_command)
    image_entrypoint = staticmethod(_launch.image_entrypoint)
    start_script = staticmethod(_launch.start_script)
    variant = staticmethod(_launch.variant)
    image_version = staticmethod(_launch.image_version)

    def read(self, d: Deployment, launch: Any, env: dict[str, Any], storage: Any = None) -> None:
        if not launch.tokens:
            _launch.read_start_script_env(d, env)
        self.read_options(d, launch.tokens, env, strict=not launch.wrapper)
        if launch.wrapper == "kaito" and d.model is None:
            _launch.kaito_preset_model(d)

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
        from kvlint.engines.vllm import options

        options.read(
            d, tokens, env, positional_model=positional_model, strict=strict, unknown=unknown, argv=argv
        )

    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        return LongSequence(Startup.REFUSES)  # the KV-cache check at start-up (kv_cache_utils)

    def indexer_keys(self, arch: Any, plan: Any) -> bool:
        return bool(plan.indexer_keys)


ENGINE = VLLM()
