"""What a rule is, and what it sees."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.deployment import Deployment
from kvlint.findings import Finding, Fix, Issue, Location, Severity
from kvlint.record import field, record


@record
class Thresholds:
    kv103_margin: float = 0.0  # extra headroom KV103 asks for (0.1 = warn below 110 % of the need)
    fragmentation: float = 0.0  # share of the pool assumed lost to fragmentation in KV103
    declared_tolerance: float = 0.05  # KV303: relative difference that counts as a mismatch


@record
class Context:
    """Everything a rule may read. Rules do no I/O."""

    file: str
    deployment: Deployment | None = None
    model: ModelArch | None = None
    gpu: GpuSpec | None = None
    settings: EngineSettings | None = None
    plan: Plan | None = None
    issues: list[Issue] = field(default_factory=list)
    unknown: set[str] = field(default_factory=set)
    thresholds: Thresholds = field(default_factory=Thresholds)

    def finding(
        self,
        rule: Rule,
        where: Location | None,
        message: str,
        details: tuple[str, ...] | list[str] = (),
        fix: str | None = None,
        severity: Severity | None = None,
        fixes: tuple[Fix, ...] | list[Fix] = (),
    ) -> Finding:
        loc = where or (self.deployment.where if self.deployment else Location(self.file, 1, 1))
        return Finding(
            rule=rule.id,
            name=rule.name,
            severity=severity or rule.severity,
            message=message,
            where=loc,
            details=tuple(details),
            fix=fix,
            deployment=self.deployment.label() if self.deployment else None,
            fixes=tuple(fixes),
        )


class Rule:
    """Base class: subclasses set id, name, severity and `needs`, document themselves in the
    docstring (the first line is the summary) and yield findings from `check`."""

    id: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    needs: ClassVar[tuple[str, ...]] = ()  # "model", "gpu", "plan": the runner skips the rule without them
    # what `--fix` may do with the rule's findings: "safe", "unsafe", "safe (…); unsafe (…)" or
    # "display-only" (the fix is advice the user applies; shown, never applied)
    fix_applicability: ClassVar[str] = "display-only"

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    def check(self, ctx: Context) -> Iterator[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError


class IssueRule(Rule):
    """A rule whose findings are the issues load/extract/resolve noticed under its code."""

    def check(self, ctx: Context) -> Iterator[Finding]:
        for issue in ctx.issues:
            if issue.code == self.id:
                yield ctx.finding(self, issue.where, issue.message, issue.details, issue.fix)
