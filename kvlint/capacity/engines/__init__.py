"""One module per engine: `settings()` fills the engine's defaults, `plan()` sizes its KV pool.

This is the one engine registry: the engines are the keys of `kvlint.deployment.ENGINE_NAMES`
(also what the command line, the spec and the configuration accept), and each has a module here
of the same name. A deployment that names no modelled engine is accounted for as vLLM, the
default engine. Modules load on first use, so a run pays only for the engines it meets.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Protocol, cast

from kvlint.deployment import ENGINE_NAMES

# Plan note prefix an engine writes when its start-up warm-up cannot fit (TGI); KV102 reads it. Kept here so
# the rule does not load an engine module a run never meets.
WARMUP_FAILS = "the warm-up does not fit"

if TYPE_CHECKING:
    from kvlint.capacity.plan import EngineSettings, Plan
    from kvlint.catalog.arch import ModelArch
    from kvlint.catalog.gpus import GpuSpec
    from kvlint.deployment import Deployment

DEFAULT_ENGINE = "vllm"


class SettingRefused(ValueError):
    """A setting the engine refuses for this model, found while filling its defaults; `where` is the
    setting's location (resolve reports it there as a KV005)."""

    def __init__(self, message: str, where=None) -> None:
        super().__init__(message)
        self.where = where


class EngineModule(Protocol):
    """What every engine module provides."""

    def settings(
        self, d: Deployment, arch: ModelArch, gpu: GpuSpec | None, version_text: str | None
    ) -> EngineSettings: ...

    def plan(self, arch: ModelArch, gpu: GpuSpec, s: EngineSettings) -> Plan: ...


def engine_module(name: str) -> EngineModule:
    """The accounting module of engine `name` (vLLM's for a name kvlint does not model)."""
    key = name if name in ENGINE_NAMES else DEFAULT_ENGINE
    return cast("EngineModule", import_module(f"{__name__}.{key}"))


__all__ = ["DEFAULT_ENGINE", "ENGINE_NAMES", "EngineModule", "engine_module"]
