"""One deployment under each release: the pipeline `kvlint check` runs (kvlint/run/lint.py
`read_and_lint`), once per release, with the release in force replaced (resolve.Defaults.release).

For a workload that states no release this is exactly `kvlint check --engine-version R`; for one whose
image pins a release it is `kvlint check` on the file with the image bumped to R
(tests/test_upgrade.py checks both). Nothing is re-planned here: the verdict and the KV pool are the
run's findings and plan.
"""

from __future__ import annotations

from kvlint.findings import Finding, Severity
from kvlint.record import record, replace
from kvlint.resolve import Resolved
from kvlint.run.lint import FileResult, read_and_lint
from kvlint.run.settings import Settings


@record(frozen=True)
class State:
    """What kvlint says of one deployment under one release."""

    release: str
    worst: Severity | None  # the capacity findings' worst severity; None: none
    codes: tuple[str, ...]  # their rule codes, sorted, once each
    findings: tuple[Finding, ...]  # the capacity findings themselves (their messages and fixes)
    kv_tokens: int | None  # the plan's KV pool in tokens; None: no plan under this release
    kv_bytes: int | None  # per GPU
    terms: tuple[tuple[str, int], ...] = ()  # the plan's memory terms per GPU (label, bytes)
    budget: int | None = None  # the plan's budget per GPU (memory x utilization)

    @property
    def verdict(self) -> tuple[Severity | None, tuple[str, ...]]:
        return self.worst, self.codes

    @property
    def passes(self) -> bool:
        return self.worst is None or self.worst < Severity.ERROR


def capacity_rules() -> frozenset[str]:
    """The rules that need the GPU or the memory plan: the checks a release's accounting decides."""
    from kvlint.rules import all_rules
    from kvlint.run.fleet import CAPACITY_NEEDS

    return frozenset(r.id for r in all_rules() if any(n in CAPACITY_NEEDS for n in r.needs.facts))


def lint_at(
    path: str, shown: str, settings: Settings, engine: str | None, release: str | None
) -> FileResult | str:
    """The file linted with `engine`'s workloads under `release` (None: as the file and settings say)."""
    if engine is not None and release is not None:
        settings = replace(settings, defaults=replace(settings.defaults, release=(engine, release)))
    return read_and_lint(path, settings, shown)


def state(result: FileResult, index: int, release: str) -> State:
    """Deployment `index` of the file's result under `release`: its capacity verdict and KV pool."""
    r: Resolved = result.deployments[index]
    label = r.deployment.label()
    rules = capacity_rules()
    mine = tuple(f for f in result.findings if f.rule in rules and f.deployment == label)
    worst = max((f.severity for f in mine), default=None)
    plan = r.plan
    return State(
        release,
        worst,
        tuple(sorted({f.rule for f in mine})),
        mine,
        plan.kv_tokens if plan is not None else None,
        plan.kv_pool if plan is not None else None,
        tuple((t.label, t.bytes) for t in plan.terms) if plan is not None else (),
        plan.budget if plan is not None else None,
    )


__all__ = ["State", "capacity_rules", "lint_at", "state"]
