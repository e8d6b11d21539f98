"""Each deployment of a file walked from the release it runs to the newest kvlint has read (or --to):
the releases at which its verdict changes or its KV pool moves by more than POOL_MOVES, each with the
release-table rows that changed since the last release reported."""

from __future__ import annotations

from kvlint import engines
from kvlint.codes import INVALID_INPUT
from kvlint.record import field, record
from kvlint.resolve import Resolved
from kvlint.run.lint import FileResult
from kvlint.run.settings import Settings
from kvlint.upgrade import releases
from kvlint.upgrade.releases import Start
from kvlint.upgrade.rows import RowChange, changed
from kvlint.upgrade.walk import State, lint_at, state

POOL_MOVES = 0.05  # a KV pool that moves by more than this fraction is reported


@record(frozen=True)
class Step:
    """A release at which the verdict or the pool changes, against the release reported before it."""

    state: State
    since: str  # the release it is compared with (the start, or the release reported before)
    pool_change: float | None  # relative change of the KV pool in tokens; None: no pool on one side
    rows: tuple[RowChange, ...]  # every row changed since `since`
    before: str = ""  # the release read just before this one (`since`, or a later one not reported)

    @property
    def rows_here(self) -> tuple[RowChange, ...]:
        """The rows that changed from `before` to this release: what the step itself brings."""
        return tuple(r for r in self.rows if r.after_release(self.before))

    @property
    def rows_earlier(self) -> tuple[RowChange, ...]:
        return tuple(r for r in self.rows if not r.after_release(self.before))


@record
class Walk:
    """One deployment's walk."""

    file: str
    line: int
    label: str
    engine: str
    start: Start
    first: State | None = None  # None: not walked (`skipped` says why)
    steps: list[Step] = field(default_factory=list)
    walked: tuple[str, ...] = ()  # every later release evaluated, oldest first
    states: list[State] = field(default_factory=list)  # the state under each of them
    skipped: str = ""

    @property
    def breaks(self) -> bool:
        """A later release turns a passing deployment into an error."""
        return self.first is not None and self.first.passes and any(not s.state.passes for s in self.steps)


@record
class FileWalk:
    walks: list[Walk] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # located diagnostics: the file could not be walked


def _moved(old: int | None, new: int | None) -> float | None:
    if old is None or new is None or old <= 0:
        return None
    return (new - old) / old


def _reported(prev: State, cur: State) -> bool:
    if cur.verdict != prev.verdict or (prev.kv_tokens is None) != (cur.kv_tokens is None):
        return True
    moved = _moved(prev.kv_tokens, cur.kv_tokens)
    return moved is not None and abs(moved) > POOL_MOVES


def _steps(engine: str, first: State, states: list[State]) -> list[Step]:
    out: list[Step] = []
    prev, walked = first, first.release
    for cur in states:
        if _reported(prev, cur):
            rows = changed(engine, prev.release, cur.release)
            out.append(Step(cur, prev.release, _moved(prev.kv_tokens, cur.kv_tokens), rows, walked))
            prev = cur
        walked = cur.release
    return out


def _start(r: Resolved, settings: Settings, engine: str) -> Start:
    stated = r.deployment.engine_version
    flag = settings.defaults.engine_version
    if stated is None and flag and settings.sources.get("engine-version") != "--engine-version":
        return Start(flag, "the configuration's engine-version")
    return releases.start(engine, str(stated.value) if stated else None, stated.note if stated else "", flag)


def _problems(base: FileResult) -> list[str]:
    """The file's input errors, located as `check` reports them."""
    return [f"{f.where}: {f.rule} {f.message}" for f in base.findings if f.rule == INVALID_INPUT]


def walk_file(path: str, shown: str, settings: Settings, to: str | None) -> FileWalk:
    """Every deployment of one file, walked."""
    base = lint_at(path, shown, settings, None, None)
    if isinstance(base, str):
        return FileWalk(problems=[base])
    out = FileWalk(problems=_problems(base))
    if base.crashed:
        return out
    runs: dict[tuple[str, str], FileResult | str] = {}
    for index, r in enumerate(base.deployments):
        out.walks.append(_walk(path, shown, settings, to, base, index, r, runs))
    return out


def _walk(
    path: str,
    shown: str,
    settings: Settings,
    to: str | None,
    base: FileResult,
    index: int,
    r: Resolved,
    runs: dict[tuple[str, str], FileResult | str],
) -> Walk:
    d = r.deployment
    engine = r.in_force.engine_name if r.in_force.engine is not None else ""
    where = Walk(shown, d.where.line, d.label(), engine, Start("", ""))
    if not engine or not engines.known(engine):
        where.skipped = "no modelled engine in force (the model or the engine is not known)"
        return where
    where.start = _start(r, settings, engine)
    where.first = state(base, index, where.start.release)
    if releases.order(engine, where.start.release) is None and not where.start.assumed:
        where.skipped = f"{engines.display(engine)} does not read the release {where.start.release!r}"
        return where
    where.walked = releases.later(engine, where.start.release, to)
    states = []
    for release in where.walked:
        key = (engine, release)
        if key not in runs:
            runs[key] = lint_at(path, shown, settings, engine, release)
        result = runs[key]
        if isinstance(result, str) or result.crashed or index >= len(result.deployments):
            where.skipped = f"the run under {release} failed"
            break
        states.append(state(result, index, release))
    where.states = states
    where.steps = _steps(engine, where.first, states)
    return where


__all__ = ["POOL_MOVES", "FileWalk", "Step", "Walk", "walk_file"]
