"""What a rule is, and what it sees.

The rule contract is typed. A rule states what it needs by the base class it derives from, and it
receives a context in which everything it needs is present (never None):

| base class          | needs                 | context            | what is certainly there                         |
|---------------------|-----------------------|--------------------|--------------------------------------------------|
| `IssueRule`         | nothing               | `IssueContext`     | the issues load/extract/resolve raised           |
| `DeploymentRule`    | a deployment          | `DeploymentContext`| the deployment (model, GPU, plan: if resolved)   |
| `GpuRule`           | the GPU               | `GpuContext`       | deployment, GPU                                  |
| `ModelRule`         | the model             | `ModelContext`     | deployment, model                                |
| `ModelGpuRule`      | model and GPU         | `ModelGpuContext`  | deployment, model, GPU                           |
| `SettingsRule`      | model and settings    | `SettingsContext`  | deployment, model, engine settings               |
| `PlanRule`          | the plan              | `PlanContext`      | deployment, model, GPU, engine settings, plan    |

The runner (lint.py) builds each context once per deployment with `contexts()`; a rule whose
needs are not met is skipped, and the coverage rules (KV002/KV003) name it.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from kvlint.capacity.plan import EngineSettings, Plan
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.gpus import GpuSpec
from kvlint.catalog.how import shown as shown_how
from kvlint.deployment import Deployment, InForce
from kvlint.findings import Finding, Fix, Issue, IssueKind, Location, Severity
from kvlint.record import field, record

if TYPE_CHECKING:
    from kvlint.resolve import Resolved


@record
class Thresholds:
    kv103_margin: float = 0.0  # extra headroom KV103 asks for (0.1 = warn below 110 % of the need)
    fragmentation: float = 0.0  # share of the pool assumed lost to fragmentation in KV103
    declared_tolerance: float = 0.05  # KV303: relative difference that counts as a mismatch
    # KV103: tokens (prompt + output) of a typical request, for the concurrency beside the worst case. The
    # default is the request NVIDIA's sizing tool assumes when none is given: 4,000 input + 1,000 output
    # tokens (ai-dynamo/aiconfigurator src/aiconfigurator/cli/main.py:407-408 @095f58a5, --isl/--osl)
    expected_tokens: int = 5000


class Need(Enum):
    """What a rule needs before it can run (the value names the facts, as rule pages print them)."""

    NOTHING = ()
    DEPLOYMENT = ("deployment",)
    GPU = ("gpu",)
    MODEL = ("model",)
    MODEL_GPU = ("model", "gpu")
    SETTINGS = ("model", "settings")
    PLAN = ("plan",)

    @property
    def facts(self) -> tuple[str, ...]:
        """The facts a deployment must have resolved ("model", "gpu", "settings", "plan")."""
        return tuple(n for n in self.value if n != "deployment")


class _Finds:
    """`finding()`, shared by every context (a mix-in with no fields)."""

    __slots__ = ()
    file: str
    deployment: Deployment | None
    model_how: str  # how the model was resolved (catalog/how.py); "" where no model is involved

    def finding(
        self,
        rule: Rule,
        where: Location | None,
        message: str,
        details: tuple[str, ...] | list[str] = (),
        fix: str | None = None,
        severity: Severity | None = None,
        fixes: tuple[Fix, ...] | list[Fix] = (),
        kind: IssueKind | None = None,
    ) -> Finding:
        d = self.deployment
        loc = where or (d.where if d is not None else Location(self.file, 1, 1))
        how = shown_how(self.model_how)
        if how and how not in details:
            details = (*details, how)
        return Finding(
            rule=rule.id,
            name=rule.name,
            severity=severity or rule.severity,
            message=message,
            where=loc,
            details=tuple(details),
            fix=fix,
            deployment=d.label() if d is not None else None,
            fixes=tuple(fixes),
            kind=kind,
            device=getattr(getattr(self, "gpu", None), "unit", None),
        )


@record
class IssueContext(_Finds):
    """The issues of one file or one deployment; `skipped` names the rules that could not run on it."""

    file: str
    issues: list[Issue]
    thresholds: Thresholds
    deployment: Deployment | None = None
    skipped: tuple[str, ...] = ()
    model_how: str = ""  # not shown: these rules do not use the model's facts


@record
class DeploymentContext(_Finds):
    file: str
    deployment: Deployment
    thresholds: Thresholds
    model: ModelArch | None = None
    gpu: GpuSpec | None = None
    settings: EngineSettings | None = None
    plan: Plan | None = None
    model_how: str = ""  # not shown: these rules do not use the model's facts
    in_force: InForce = field(default_factory=InForce)  # engine, release, GPU name, context


@record
class GpuContext(_Finds):
    file: str
    deployment: Deployment
    thresholds: Thresholds
    gpu: GpuSpec
    model: ModelArch | None = None
    settings: EngineSettings | None = None
    plan: Plan | None = None
    model_how: str = ""  # not shown: these rules do not use the model's facts
    in_force: InForce = field(default_factory=InForce)  # engine, release, GPU name, context


@record
class ModelContext(_Finds):
    file: str
    deployment: Deployment
    thresholds: Thresholds
    model: ModelArch
    gpu: GpuSpec | None = None
    settings: EngineSettings | None = None
    plan: Plan | None = None
    model_how: str = ""
    in_force: InForce = field(default_factory=InForce)  # engine, release, GPU name, context


@record
class ModelGpuContext(_Finds):
    file: str
    deployment: Deployment
    thresholds: Thresholds
    model: ModelArch
    gpu: GpuSpec
    model_how: str = ""
    in_force: InForce = field(default_factory=InForce)  # engine, release, GPU name, context


@record
class SettingsContext(_Finds):
    file: str
    deployment: Deployment
    thresholds: Thresholds
    model: ModelArch
    settings: EngineSettings
    gpu: GpuSpec | None = None
    model_how: str = ""
    in_force: InForce = field(default_factory=InForce)  # engine, release, GPU name, context


@record
class PlanContext(_Finds):
    file: str
    deployment: Deployment
    thresholds: Thresholds
    model: ModelArch
    gpu: GpuSpec
    settings: EngineSettings
    plan: Plan
    model_how: str = ""
    in_force: InForce = field(default_factory=InForce)  # engine, release, GPU name, context


Context = (
    IssueContext
    | DeploymentContext
    | GpuContext
    | ModelContext
    | ModelGpuContext
    | SettingsContext
    | PlanContext
)
C = TypeVar(
    "C",
    IssueContext,
    DeploymentContext,
    GpuContext,
    ModelContext,
    ModelGpuContext,
    SettingsContext,
    PlanContext,
)


class Rule(Generic[C]):
    """Base class: subclasses derive from one of the typed bases below, set id, name and severity,
    document themselves in the docstring (the first line is the summary) and yield findings from
    `check`."""

    id: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    needs: ClassVar[Need] = Need.NOTHING
    suppressible: ClassVar[bool] = True  # False: no comment or annotation can hide its findings
    # what `--fix` may do with the rule's findings: "safe", "unsafe", "safe (…); unsafe (…)" or
    # "display-only" (the fix is advice the user applies; shown, never applied)
    fix_applicability: ClassVar[str] = "display-only"
    # The text report counts the rule's infos instead of listing them (kvlint/report/infos.py): one line
    # per kind of the issue behind them (None: any other), "what was not checked or assumed — what to do"
    infos: ClassVar[dict[IssueKind | None, str]] = {}

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    def check(self, ctx: C) -> Iterator[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError


class IssueRule(Rule[IssueContext]):
    """A rule whose findings are the issues load/extract/resolve noticed under its code."""

    needs = Need.NOTHING

    def check(self, ctx: IssueContext) -> Iterator[Finding]:
        for issue in ctx.issues:
            if issue.code == self.id:
                note = self.note(ctx)
                details = (*issue.details, note) if note else issue.details
                yield ctx.finding(
                    self, issue.where, issue.message, details, issue.fix, issue.severity, kind=issue.kind
                )

    def note(self, ctx: IssueContext) -> str:
        """A last detail line added to each finding (none by default)."""
        return ""


def skipped_note(ctx: IssueContext) -> str:
    """'skipped: KV101, KV102' — the rules that could not run on the deployment, or ''."""
    return "skipped: " + ", ".join(ctx.skipped) if ctx.skipped else ""


class DeploymentRule(Rule[DeploymentContext]):
    needs = Need.DEPLOYMENT


class GpuRule(Rule[GpuContext]):
    needs = Need.GPU


class ModelRule(Rule[ModelContext]):
    needs = Need.MODEL


class ModelGpuRule(Rule[ModelGpuContext]):
    needs = Need.MODEL_GPU


class SettingsRule(Rule[SettingsContext]):
    needs = Need.SETTINGS


class PlanRule(Rule[PlanContext]):
    needs = Need.PLAN


BASES: tuple[type[Rule], ...] = (
    IssueRule,
    DeploymentRule,
    GpuRule,
    ModelRule,
    ModelGpuRule,
    SettingsRule,
    PlanRule,
)


def contexts(
    file: str, r: Resolved, thresholds: Thresholds, skipped: tuple[str, ...] = ()
) -> dict[Need, Context]:
    """The context of every need this resolved deployment meets (a missing key: the need is not met)."""
    d, model, gpu, s, p = r.deployment, r.model, r.gpu, r.settings, r.plan
    how, f = r.model_how, r.in_force
    out: dict[Need, Context] = {
        Need.NOTHING: IssueContext(file, r.issues, thresholds, d, skipped),
        Need.DEPLOYMENT: DeploymentContext(file, d, thresholds, model, gpu, s, p, in_force=f),
    }
    if gpu is not None:
        out[Need.GPU] = GpuContext(file, d, thresholds, gpu, model, s, p, in_force=f)
    if model is not None:
        out[Need.MODEL] = ModelContext(file, d, thresholds, model, gpu, s, p, how, in_force=f)
        if gpu is not None:
            out[Need.MODEL_GPU] = ModelGpuContext(file, d, thresholds, model, gpu, how, in_force=f)
        if s is not None:
            out[Need.SETTINGS] = SettingsContext(file, d, thresholds, model, s, gpu, how, in_force=f)
        if gpu is not None and s is not None and p is not None:
            out[Need.PLAN] = PlanContext(file, d, thresholds, model, gpu, s, p, how, in_force=f)
    return out
