"""An engine's `settings()` at work: the settings in force, built beside the deployment, never on it.

`Filling.of(d)` starts from what the file states; the engine fills each setting it leaves out with its
default for the release (`deployment.default(value, note)`), and its own options (`options`, by the
engine's option name: the deployment's `extra`, then kvlint's fields carried onto them by
engines/native.py, then the defaults). `in_force()` is the frozen result resolve keeps
(kvlint/deployment.py `InForce`).
"""

from __future__ import annotations

from typing import Any

from kvlint.deployment import FILLED, Deployment, InForce, Settings
from kvlint.findings import Issue
from kvlint.record import field, fields, record, replace


@record
class Filling(Settings):
    """The settings (kvlint/deployment.py `Settings`) as the engine fills them, from what `d` states."""

    # what the file states (read only); required after Settings' defaulted fields, as kvlint.record takes
    # fields by keyword (dataclasses, whose rules mypy applies, do not)
    d: Deployment  # type: ignore[misc]
    said: list[Issue] = field(default_factory=list)

    @classmethod
    def of(cls, d: Deployment) -> Filling:
        return cls(d=d, options=dict(d.extra), **{name: getattr(d, name) for name in FILLED})

    def option(self, key: str) -> Any:
        """The value of one of the engine's own options in force, None when unset."""
        v = self.options.get(key)
        return v.value if v is not None else None

    def in_force(self, base: InForce | None = None) -> InForce:
        """The settings as filled, on `base` (the engine and GPU resolve settled)."""
        values = {name: getattr(self, name) for name in fields(Settings)}
        return replace(base or InForce(), said=tuple(self.said), **{**values, "options": dict(self.options)})


__all__ = ["Filling"]
