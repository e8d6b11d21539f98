"""NVIDIA NIM: an LLM-specific NIM image (or the multi-LLM NIM) that runs a profile's backend. kvlint plans a
vLLM profile through the vLLM engine with the options NIM passes it (options.py); what it cannot know offline is
one KV004 (`ENGINE` implements kvlint.engines.base.Engine; the modules load on first use).

The answers about the engine's behaviour are its vLLM backend's: NIM starts vLLM with the options it reads,
so vLLM's start-up checks, memory share and KV-head sharding are the ones that run.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kvlint import engines
from kvlint.deployment import Deployment, Value
from kvlint.engines.base import LongSequence
from kvlint.engines.nim import launch as _launch
from kvlint.engines.shared import EngineBase

BACKEND = (
    "vllm"  # the backend whose options NIM reads (NIM_PASSTHROUGH_ARGS) and whose start-up answers it gives
)


def _backend(s: Any = None) -> Any:
    """vLLM, or the backend of the profile settings `s` were planned under (planned.py)."""
    return engines.get(s.extra.get("nim_backend", BACKEND) if s is not None else BACKEND)


@cache
def _option_table() -> Any:
    import copy
    import os

    from kvlint.extract.pod.engine_args.options import load_table

    own = load_table(os.path.join(os.path.dirname(__file__), "data", "options.json"), "nim")
    table = copy.copy(_backend().options())
    table.names = {**table.names, **own.names}
    table.options = {**table.options, **own.options}
    return table


class Nim(EngineBase):
    name = "nim"
    display = "NVIDIA NIM"
    image_words = _launch.IMAGES
    script_word = ""
    names_fp8_weights_fix = False  # NIM's precision is its profile's (an fp8 profile), not a flag
    goes_by = {
        # KServe: the runtime and model-format names NVIDIA's NIM runtimes carry (nvidia-nim-llama3-8b-instruct,
        # NVIDIA/nim-deploy kserve/runtimes/*.yaml)
        "kserve runtime": ("nim",),
    }

    image_command = staticmethod(_launch.image_command)

    @property
    def fraction_field(self) -> str | None:  # type: ignore[override]
        return _backend().fraction_field

    @property
    def kv_heads(self) -> Any:  # type: ignore[override]
        return _backend().kv_heads

    @property
    def batch_checks(self) -> Any:  # type: ignore[override]
        return _backend().batch_checks

    @property
    def no_kv_memory_says(self) -> str:  # type: ignore[override]
        return _backend().no_kv_memory_says

    @property
    def models_expert_placement(self) -> bool:  # type: ignore[override]
        return _backend().models_expert_placement

    def read(self, d: Deployment, launch: Any, env: dict[str, Any], storage: Any = None) -> None:
        from kvlint.engines.nim import options

        options.read(d, env)

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
        """Options another input kind hands over are vLLM's (what NIM_PASSTHROUGH_ARGS passes on)."""
        _backend().read_options(d, tokens, env, positional_model, strict, unknown, argv)

    def options(self) -> Any:
        """vLLM's options (what NIM_PASSTHROUGH_ARGS hands on) and NIM's own variables (data/options.json)."""
        return _option_table()

    def mapping(self) -> dict[str, tuple[str, str]]:
        """NIM variable -> the Deployment field it sets (through the vLLM option NIM passes), then vLLM's
        options (NIM_PASSTHROUGH_ARGS)."""
        from kvlint.engines.nim import env

        vllm = _backend().mapping()
        return {**{var: vllm[option] for var, option in env.TO_VLLM.items() if option in vllm}, **vllm}

    def flag_for(self, field: str) -> str:
        """The NIM variable that sets the field where NIM has one (NIM_MAX_MODEL_LEN), else vLLM's option
        (which NIM_PASSTHROUGH_ARGS passes on)."""
        for var, (target, _kind) in self.mapping().items():
            if target == field:
                return var
        return str(_backend().flag_for(field))

    def knob_for(self, field: str, s: Any) -> str | None:
        """Under a vLLM profile, `flag_for`. A TensorRT-LLM profile reads NIM's own variables only
        (NIM_MAX_MODEL_LEN, NIM_TENSOR_PARALLEL_SIZE): NIM_PASSTHROUGH_ARGS carries vLLM options
        (docs.nvidia.com/nim/large-language-models/2.0.0/reference/advanced-configuration.html, Passthrough
        Arguments), so a field no NIM variable sets has no knob there (None)."""
        from kvlint.engines.nim import env

        found = self.flag_for(field)
        if _backend(s).name == BACKEND:
            return found
        return found if found in env.TO_VLLM else None

    def memory_options(self) -> dict[str, Any]:
        from kvlint.engines.memory_entry import from_data

        return from_data(self.name, "memory_options")

    def settings(self, d: Deployment, arch: Any, gpu: Any, version_text: str | None) -> Any:
        """The settings of the profile NIM runs, planned by the profile's backend (planned.py) where the image's
        profiles are published; else vLLM's settings for the options a vLLM NIM_MODEL_PROFILE passes it. The
        backend's release inside a NIM image is not read from its tag (a NIM tag is NIM's own release), so its
        defaults are kvlint's default release's. The settings are NIM's (engine `nim`: the plan, fixes and
        messages come back here)."""
        from kvlint.engines.nim import planned
        from kvlint.record import replace

        if planned.applies(d):
            return planned.settings(d, arch, gpu)
        return replace(_backend().settings(d, arch, gpu, None), engine=self.name)

    def plan(self, arch: Any, gpu: Any, s: Any) -> Any:
        from kvlint.engines.nim import planned

        return planned.plan(arch, gpu, s)

    def request_units(self, arch: Any, gpu: Any, s: Any, tokens: int) -> int:
        return int(_backend(s).request_units(arch, gpu, s, tokens))

    def release(self, version_text: str | None) -> tuple[int, ...] | None:
        return None  # a NIM release says nothing of vLLM's

    def long_sequence(self, version_text: str | None, max_context: Value | None) -> LongSequence:
        return _backend().long_sequence(None, max_context)

    def parallelism_refusal(self, d: Deployment, in_force: Any) -> Any:
        """NIM_TENSOR_PARALLEL_SIZE of a TP the image's release publishes no runnable profile of (parallel.py)."""
        from kvlint.engines.nim import parallel

        return parallel.refusal(d, in_force)

    def runs_at_tp(self, d: Deployment, gpu: Any, gpus: int, tp: int) -> bool:
        """A profile of TP `tp` the image's release publishes runs on `gpus` of `gpu` and is left by the NIM
        variables the file sets (parallel.py); where the release's profiles are not in kvlint's table, False:
        a TP no published profile is known to have is not a fix to offer."""
        from kvlint.engines.nim import parallel

        return parallel.runs_at(d, gpu, gpus, tp)

    def alternatives(self, d: Deployment, arch: Any, gpu: Any, s: Any) -> tuple[tuple[str, str, Any], ...]:
        """The other published profiles runnable here, by NIM_MODEL_PROFILE (alternatives.py)."""
        from kvlint.engines.nim import alternatives

        return alternatives.alternatives(d, arch, gpu, s)

    def indexer_keys(self, arch: Any, plan: Any) -> bool:
        return bool(engines.get(plan.engine).indexer_keys(arch, plan))


ENGINE = Nim()
