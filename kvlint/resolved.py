"""What resolve settles for one deployment (`Resolved`), the fallbacks it is given (`Defaults`), and where a
finding about a resolved value points (`loc`)."""

from __future__ import annotations

from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.deployment import Deployment, InForce, Value
from kvlint.findings import Issue, Location
from kvlint.record import field, record


@record
class Defaults:
    """Fallbacks from the command line or the configuration file."""

    gpu: str | None = None
    gpu_source: str = ""
    fleet: tuple[str, ...] = ()  # the cluster's GPU types: capacity is checked on each (kvlint/run/fleet.py)
    fleet_source: str = ""
    engine: str | None = None
    engine_version: str | None = None
    # (engine, release) that replaces the release a workload of that engine states or defaults to: the
    # release `kvlint upgrade` evaluates it under (kvlint/upgrade/walk.py); `check` never sets it
    release: tuple[str, str] | None = None
    hub: bool = False  # --hub / `hub: true`: fetch a model no local source knows from the Hub


@record
class Resolved:
    deployment: Deployment
    model: ModelArch | None = None
    model_how: str = ""
    gpu: GpuSpec | None = None
    settings: EngineSettings | None = None
    plan: Plan | None = None
    issues: list[Issue] = field(default_factory=list)
    unknown: set[str] = field(default_factory=set)  # "model", "gpu", "gpu-memory", "engine"
    in_force: InForce = field(default_factory=InForce)  # engine, release, GPU name, settings in force


def loc(d: Deployment, *values: Value | None) -> Location:
    """The first of `values` that has a location, else the deployment's."""
    for v in values:
        if v is not None and v.where is not None:
            return v.where
    return d.where
