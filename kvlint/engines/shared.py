"""What the engine packages share: answers every engine gives the same way unless it says otherwise.

An engine's class derives from `EngineBase` and overrides what differs; `kvlint.engines.base.Engine` is
the protocol callers see.
"""

from __future__ import annotations

from functools import cached_property
from importlib import import_module
from typing import Any

from kvlint.deployment import Deployment, InForce, Value
from kvlint.engines.base import BatchCheck, KvHeadSharding, LongSequence, Refusal, Startup


def lora_adapters(enabled: Any, named: Any) -> list[tuple[str, str]] | None:
    """The adapters a deployment that enables LoRA (`enable_lora`, or adapters `named`) serves ([] when none
    is named); None when LoRA is off."""
    adapters = named or []
    return adapters if enabled or adapters else None


def adapters_named(adapters: list[tuple[str, str]]) -> str:
    """' serving adapter(s) a=ref, b on the base model;' for a plan's LoRA note ('' without adapters)."""
    if not adapters:
        return ""
    shown = ", ".join(f"{name}={ref}" if name else ref for name, ref in adapters)
    return f" serving adapter(s) {shown} on the base model;"


def setting_shown(extra: dict[str, Any], key: str, default: int, flag: str, engine: str = "vLLM") -> str:
    """'--max-loras 4' when stated, '--max-loras 1 (vLLM default)' when not."""
    value = extra.get(key)
    return f"{flag} {value}" if value is not None else f"{flag} {default} ({engine} default)"


def _load(ref: str) -> Any:
    """`package.module:NAME` -> that object (the module loads on first use)."""
    module, _, name = ref.partition(":")
    return getattr(import_module(module), name)


class EngineBase:
    # where the engine's parts live: its options reader (read, MAPPING, OPTIONS), then `module:NAME` of its
    # memory-options table (its loader), settings, plan and version reader
    reader = ""
    memory_table = ""
    settings_of = ""
    plan_of = ""
    release_of = ""

    name = ""
    display = ""
    fraction_field: str | None = "gpu_memory_utilization"
    kv_heads = KvHeadSharding.REPLICATED
    kv_split_says = ""
    batch_checks: frozenset[BatchCheck] = frozenset()
    no_kv_memory_says = ""
    ray_places_workers = False
    models_expert_placement = False
    names_fp8_weights_fix = False
    refuses_context_beyond_model = True
    rope_cache_at_load = True
    runs_on_cpu_without_gpu = False
    gpus_share_memory = True
    plans_on_tpu = False
    sizes_from_gpu_count = True  # the safe answer: a plan waits for the GPU count unless the engine says not
    script_word = ""  # a word that, in a shell command or a Python import path, names the engine
    image_words: tuple[str, ...] = ()
    goes_by: dict[str, tuple[str, ...]] = {}  # input kind -> the words it names the engine by
    unread_in: dict[str, str] = {}  # input kind -> why kvlint does not read the engine as it runs it
    native_fields: dict[
        str, Any
    ] = {}  # kvlint's field -> where the engine keeps it (engines/native.py); none: SAME  # words of an image name that name the engine's images

    def entry_point(self, at: Any) -> Any:
        return None

    def wrapper_entry(self, at: Any) -> Any:
        return None

    def image_command(self, first: list[Any], image: str, repository: str) -> Any:
        return None

    def image_entrypoint(self, first: list[Any], image: str, repository: str) -> Any:
        return None

    def start_script(self, image: str, repository: str) -> Any:
        return None

    def variant(self, launch: Any, image: str) -> Any:
        return launch

    def image_version(self, image: str) -> str | None:
        return None

    def read(self, d: Deployment, launch: Any, env: dict[str, Any], storage: Any = None) -> None:
        self.read_options(d, launch.tokens, env, strict=not launch.wrapper)

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
        import_module(self.reader).read(d, tokens, env, strict=strict)

    def option_files(self, d: Deployment) -> tuple[str, ...]:
        return ()

    def read_option_file(self, d: Deployment, path: str, found: Any) -> None:
        return None

    def option_folders(self, d: Deployment) -> tuple[str, ...]:
        return ()

    def read_option_folder(self, d: Deployment, path: str, folder: Any) -> None:
        return None

    def options(self) -> Any:
        from kvlint.extract.pod.engine_args.options import load_table

        return load_table(import_module(self.reader).OPTIONS, self.name)

    def mapping(self) -> dict[str, tuple[str, str]]:
        return import_module(self.reader).MAPPING

    @cached_property
    def _flags(self) -> dict[str, str]:
        """Deployment field -> the option that sets it (the first listed where several do)."""
        out: dict[str, str] = {}
        for option, (attr, _kind) in self.mapping().items():
            out.setdefault(attr, option)
        return out

    def flag_for(self, field: str) -> str:
        return self._flags.get(field, field)

    def knob_for(self, field: str, s: Any) -> str | None:
        return self.flag_for(field)

    def memory_options(self) -> dict[str, Any]:
        return _load(self.memory_table)()

    def settings(self, d: Deployment, arch: Any, gpu: Any, version_text: str | None) -> Any:
        return _load(self.settings_of)(d, arch, gpu, version_text)

    def plan(self, arch: Any, gpu: Any, s: Any) -> Any:
        return _load(self.plan_of)(arch, gpu, s)

    def request_units(self, arch: Any, gpu: Any, s: Any, tokens: int) -> int:
        """The plan's own count for a request of `tokens` (its sliding windows, blocks and encoder tokens)."""
        from kvlint.record import replace

        return int(self.plan(arch, gpu, replace(s, max_model_len=tokens)).request_units)

    def release(self, version_text: str | None) -> tuple[int, ...] | None:
        return _load(self.release_of)(version_text)

    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        return LongSequence(Startup.CAPS)

    def indexer_keys(self, arch: Any, plan: Any) -> bool:
        return False

    def parallelism_refusal(self, d: Deployment, in_force: InForce) -> Refusal | None:
        return None

    def runs_at_tp(self, d: Deployment, gpu: Any, gpus: int, tp: int) -> bool:
        return True

    def kv_head_sharding(self, version_text: str | None) -> KvHeadSharding:
        return self.kv_heads

    def replica_dp(self, d: Deployment, dp: int) -> int:
        return dp

    def online_quant(self, name: str) -> Any:
        return None

    def backend_kv(self, d: Deployment, arch: Any) -> str | None:
        return None

    def alternatives(self, d: Deployment, arch: Any, gpu: Any, s: Any) -> tuple[tuple[str, str, Any], ...]:
        return ()

    def context_fix(self, arch: Any, gpu: Any, s: Any, plan: Any) -> int | None:
        return plan.max_len_that_fits if plan.kv_pool > 0 and plan.max_len_that_fits > 0 else None

    def smaller_kv(self, version_text: str | None) -> tuple[str, str] | None:
        return ("fp8", "fp8")
