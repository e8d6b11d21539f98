"""One lint run: files -> load -> extract -> link -> resolve -> plan -> rules -> suppressions -> findings."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import Any

from kvlint import link
from kvlint.bounds import WORKLOADS_MAX
from kvlint.codes import INVALID_INPUT, NOT_CHECKABLE
from kvlint.deployment import Deployment
from kvlint.extract import extract_document
from kvlint.fileio import NotRegular, TooLarge, base_dir, read_regular
from kvlint.findings import Finding, Issue, Location, Severity
from kvlint.link import sharing
from kvlint.load import LoadedFile, load_bytes, load_oversized
from kvlint.load.nearby import Nearby
from kvlint.record import field, record, replace
from kvlint.resolve import Resolved, resolve
from kvlint.rules.base import IssueContext, Need, Rule, contexts
from kvlint.run import fleet
from kvlint.run.finish import settle
from kvlint.run.settings import Settings


@record
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    deployments: list[Resolved] = field(default_factory=list)
    lines: dict[int, str] = field(
        default_factory=dict
    )  # the source lines findings cite (1-based), for carets
    suppressed: list[Finding] = field(default_factory=list)  # suppressed_by says by what
    crashed: bool = False  # an internal error stopped this file's lint (a KV001 says so; exit 2)


@record
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # paths that could not be read (exit 2)
    notes: list[str] = field(default_factory=list)  # what discovery did not read or follow (stderr)
    skipped: str = ""  # what discovery skipped, for the summary: "3 paths skipped by .gitignore"

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.files for f in r.findings), key=Finding.sort_key)

    @property
    def suppressed(self) -> list[Finding]:
        return sorted((f for r in self.files for f in r.suppressed), key=Finding.sort_key)

    @property
    def deployments(self) -> list[Resolved]:
        return [d for r in self.files for d in r.deployments]


def check_deployment(path: str, r: Resolved, settings: Settings, rules: Sequence[Rule[Any]]) -> list[Finding]:
    """Every rule whose needs the resolved deployment meets, each with its typed context; the
    coverage rules (KV002/KV003/KV005) are told which rules were skipped."""
    skipped = tuple(rule.id for rule in rules if rule.needs.facts and not _met(rule, r))
    by_need = contexts(path, r, settings.thresholds, skipped)
    out: list[Finding] = []
    for rule in rules:
        ctx = by_need.get(rule.needs)
        if ctx is not None:
            out.extend(rule.check(ctx))
    return out


def _met(rule: Rule[Any], r: Resolved) -> bool:
    facts = {"model": r.model, "gpu": r.gpu, "settings": r.settings, "plan": r.plan}
    return all(facts[name] is not None for name in rule.needs.facts)


def check_file_issues(
    path: str, issues: list[Issue], settings: Settings, rules: Sequence[Rule[Any]]
) -> list[Finding]:
    """The issue rules over the problems that belong to the file rather than to one deployment."""
    ctx = IssueContext(path, issues, settings.thresholds)
    return [f for rule in rules if rule.needs is Need.NOTHING for f in rule.check(ctx)]


def lint_loaded(
    loaded: LoadedFile, settings: Settings, base_dir: str, real_path: str | None = None
) -> FileResult:
    """One file from load to findings: extract each document, link across the documents (and the
    files beside it), resolve and plan each workload, run the rules, settle the findings."""
    from kvlint.rules import all_rules

    rules = all_rules()
    path = loaded.path
    # objects other documents define (a KServe runtime): this file's, then its directory's when on disk
    nearby = Nearby(path, real_path, loaded.documents, settings.max_file_size)
    extracted, file_issues = _extract(loaded, base_dir, nearby)
    extracted, beside = link.read_beside(extracted, nearby)
    extracted = link.place_on_pools(extracted, real_path, loaded)
    deployments = [resolve(d, settings.defaults) for d in extracted]
    _shared_cards(deployments, beside.sharing)  # the configs beside are read when pods share a card
    findings, owners = _check(path, deployments, settings, rules)
    if not deployments:  # a GPU container or engine command kvlint could not read: said
        file_issues.extend(link.never_silent(loaded.documents, path, file_issues))
    found = check_file_issues(path, file_issues, settings, rules)
    findings.extend(found)
    owners.extend([None] * len(found))
    kept, suppressed, lines = settle(loaded, settings, findings, owners, deployments)
    return FileResult(path, findings=kept, deployments=deployments, lines=lines, suppressed=suppressed)


def _extract(loaded: LoadedFile, base_dir: str, nearby: Nearby) -> tuple[list[Deployment], list[Issue]]:
    """The workloads of each document, and the file's issues (the loader's, then extraction's)."""
    path = loaded.path
    file_issues = list(loaded.issues)
    extracted: list[Deployment] = []
    for doc in loaded.documents:
        if len(extracted) >= WORKLOADS_MAX:  # each is resolved and planned: the work is bounded
            file_issues.append(_too_many_workloads(doc, path))
            break
        deployments, issues = extract_document(doc, path, base_dir, loaded.source.lines, nearby)
        file_issues.extend(issues)
        extracted.extend(d.freeze() for d in deployments)  # what the file says: read only from here
    return extracted, file_issues


def _sharer(r: Resolved) -> sharing.Sharer:
    """The workload's part in a shared card: the engine's memory fraction as resolved (defaults
    filled), else as stated."""
    if r.settings is not None:
        fraction: float | None = r.settings.utilization
    else:
        v = r.deployment.gpu_memory_utilization
        fraction = float(v.value) if v is not None and isinstance(v.value, (int, float)) else None
    return sharing.Sharer(r.deployment, r.gpu.id if r.gpu else "", fraction, r.in_force.engine_name)


def _shared_cards(deployments: list[Resolved], configs: Callable[[], list[sharing.Replicas]]) -> None:
    """The memory fractions of the workloads that share one card, summed, on each that takes part."""
    summed = sharing.overcommits([_sharer(r) for r in deployments], configs)
    for r in deployments:
        total = summed.get(id(r.deployment))
        if total is not None:
            r.in_force = replace(r.in_force, gpu_sharing=total)


def _check(
    path: str, deployments: list[Resolved], settings: Settings, rules: Sequence[Rule[Any]]
) -> tuple[list[Finding], list[Resolved | None]]:
    """The rules' findings on each workload (on each fleet GPU when it names none), and the
    workload each finding belongs to."""
    findings: list[Finding] = []
    owners: list[Resolved | None] = []
    capacity = {rule.id for rule in rules if any(n in fleet.CAPACITY_NEEDS for n in rule.needs.facts)}
    for r in deployments:
        found = fleet.findings(path, r, settings, rules, check_deployment)
        if r.deployment.node_pools is not None:  # placed by its node pools: the findings name them
            from kvlint.link import pools

            found = pools.cite(r, found, capacity)
        findings.extend(found)
        owners.extend([r] * len(found))
    return findings, owners


def _too_many_workloads(doc, path: str) -> Issue:
    root = doc.root
    where = root.where(path) if root is not None and hasattr(root, "where") else Location(path, 1, 1)
    return Issue(
        NOT_CHECKABLE,
        f"more than {WORKLOADS_MAX:,} serving workloads in one file: this document and the rest are not checked",
        where,
        fix="split the file",
    )


def read_and_lint(path: str, settings: Settings, display: str | None = None) -> FileResult | str:
    """Lint one file from disk; a string (the reason) when it cannot be read at all."""
    shown = display or path
    base = base_dir(path)
    try:  # only a regular file, read capped by bytes read (a FIFO never ends, /dev/zero never stops)
        data = read_regular(path, settings.max_file_size)
    except NotRegular:
        return f"{shown}: not a regular file (a directory, pipe, socket or device); use `-` for stdin"
    except TooLarge as exc:
        loaded = load_oversized(shown, exc.size, settings.max_file_size)
        return _guarded(shown, lambda: lint_loaded(loaded, settings, base, path))
    except OSError as exc:
        return f"{shown}: cannot read: {exc.strerror or exc}"
    return lint_text(data, shown, settings, base, path)


def lint_text(
    data: bytes, display: str, settings: Settings, base_dir: str = ".", real_path: str | None = None
) -> FileResult:
    """Lint one file's bytes (`real_path`: where it is on disk, so the files beside it can be read). One bad file never costs the others: an unexpected exception (a
    kvlint bug an input found) becomes a KV001 "internal error" finding for this file alone, the
    run goes on and exits 2."""
    return _guarded(
        display,
        lambda: lint_loaded(
            load_bytes(data, display, settings.max_file_size, real_path), settings, base_dir, real_path
        ),
    )


def file_linter(
    settings: Settings, display: str, real_path: str | None = None, base: str = "."
) -> Callable[[bytes], FileResult]:
    """`lint_text` bound to one file, for the fix rounds (fix/apply.Lint): its lint from bytes (the
    findings, and the workloads whose settings a round's check reads). `real_path`: the file on disk
    (its directory is the base then), so the rounds read what is beside it."""
    where = base_dir(real_path) if real_path is not None else base

    def lint(data: bytes) -> FileResult:
        return lint_text(data, display, settings, where, real_path)

    return lint


def _guarded(display: str, lint: Callable[[], FileResult]) -> FileResult:
    try:
        return lint()
    except Exception as exc:  # noqa: BLE001 - isolation is the point; the error is reported, not hidden
        return internal_error(display, exc)
    finally:
        _resume_collector()


def _resume_collector() -> None:
    """After a file: a garbage collector the command paused for its start-up (kvlint/entry.py) runs
    again, and what start-up and that file built (modules, catalogs, tables: they live as long as
    the process) is frozen out of its later collections, and stays shared with forked workers."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def internal_error(path: str, exc: BaseException) -> FileResult:
    from kvlint.rules import get

    rule = get(INVALID_INPUT)
    assert rule is not None
    kind = type(exc).__name__
    text = str(exc)[:200]
    message = f"internal error while linting this file ({kind}{': ' + text if text else ''}); nothing in it was checked"
    where = Location(path, 1, 1)
    finding = Finding(
        rule.id,
        rule.name,
        Severity.ERROR,
        message,
        where,
        fix="please report this to kvlint with the file (or a reduced copy)",
    )
    return FileResult(path, findings=[finding], crashed=True)


def exit_code(run: RunResult, settings: Settings) -> int:
    if run.errors or any(r.crashed for r in run.files):
        return 2
    worst = max((f.severity for f in run.findings), default=None)
    return 1 if worst is not None and worst >= settings.fail_on else 0


__all__ = [
    "FileResult",
    "RunResult",
    "Severity",
    "exit_code",
    "file_linter",
    "lint_loaded",
    "lint_text",
    "read_and_lint",
]
