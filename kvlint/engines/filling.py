"""An engine's `settings()` at work: the settings in force, built beside the deployment, never on it.

`Filling.of(d)` starts from what the file states; the engine fills each setting it leaves out with its
default for the release (`deployment.default(value, note)`), and its own options (`options`, by the
engine's option name: the deployment's `extra`, then kvlint's fields carried onto them by
engines/native.py, then the defaults). `in_force()` is the frozen result resolve keeps
(kvlint/deployment.py `InForce`).
"""

from __future__ import annotations

from typing import Any

from kvlint.deployment import FILLED, Deployment, InForce, Value
from kvlint.findings import Issue
from kvlint.record import field, record, replace


@record
class Filling:
    d: Deployment  # what the file states (read only)
    tensor_parallel: Value[int] | None = None
    pipeline_parallel: Value[int] | None = None
    max_context: Value[int] | None = None
    max_sequences: Value[int] | None = None
    max_batched_tokens: Value[int] | None = None
    gpu_memory_utilization: Value[float] | None = None
    block_size: Value[int] | None = None
    kv_cache_dtype: Value[str] | None = None
    prefill_chunking: Value[bool] | None = None  # as the release decides it (TGI v2.4+)
    options: dict[str, Value[Any]] = field(default_factory=dict)
    said: list[Issue] = field(default_factory=list)

    @classmethod
    def of(cls, d: Deployment) -> Filling:
        return cls(d, options=dict(d.extra), **{name: getattr(d, name) for name in FILLED})

    def option(self, key: str) -> Any:
        """The value of one of the engine's own options in force, None when unset."""
        v = self.options.get(key)
        return v.value if v is not None else None

    def in_force(self, base: InForce | None = None) -> InForce:
        """The settings as filled, on `base` (the engine and GPU resolve settled)."""
        values = {name: getattr(self, name) for name in FILLED}
        return replace(
            base or InForce(),
            prefill_chunking=self.prefill_chunking,
            options=dict(self.options),
            said=tuple(self.said),
            **values,
        )


__all__ = ["Filling"]
