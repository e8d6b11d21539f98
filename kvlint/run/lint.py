"""One lint run: files -> load -> extract -> resolve -> plan -> rules -> suppressions -> findings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kvlint import sharing
from kvlint.bounds import FINDINGS_PER_RULE_MAX, WORKLOADS_MAX
from kvlint.codes import INVALID_INPUT, NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment
from kvlint.extract import extract_document
from kvlint.fileio import NotRegular, TooLarge, base_dir, read_regular
from kvlint.findings import Finding, Issue, Location, Severity
from kvlint.load import LoadedFile, load_bytes, load_oversized, physical
from kvlint.load.nearby import Nearby
from kvlint.record import field, record
from kvlint.resolve import Resolved, resolve
from kvlint.rules.base import IssueContext, Need, Rule, contexts
from kvlint.run import fleet, suppress
from kvlint.run.settings import Settings

if TYPE_CHECKING:  # DRA claims and the unread-layout net load only when a file needs them
    from kvlint.extract.dra import Known


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


_READ_OR_SAID = (
    INVALID_INPUT,
    NOT_CHECKABLE,
    UNPARSED_SETTING,
)  # the file already says what it could not read


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
    from kvlint.rules import all_rules

    rules = all_rules()
    path = loaded.path
    result = FileResult(path)
    file_issues = list(loaded.issues)
    findings: list[Finding] = []
    owners: list[Resolved | None] = []  # the workload whose rules produced each finding
    # objects other documents define (a KServe runtime): this file's, then its directory's when on disk
    nearby = Nearby(path, real_path, loaded.documents, settings.max_file_size)
    extracted: list[Deployment] = []
    for doc in loaded.documents:
        if len(extracted) >= WORKLOADS_MAX:  # each is resolved and planned: the work is bounded
            file_issues.append(_too_many_workloads(doc, path))
            break
        deployments, issues = extract_document(doc, path, base_dir, loaded.source.lines, nearby)
        file_issues.extend(issues)
        extracted.extend(deployments)
    claims = any("dra_refs" in d.extra for d in extracted)  # a container names a DRA claim
    beside = Beside.of(nearby, claims) if extracted else Beside()
    if claims:
        from kvlint.extract import dra

        known = beside.dra if beside.dra is not None else dra.Known()
        for d in extracted:
            dra.attach(d, known)
    result.deployments = [resolve(d, settings.defaults) for d in extracted]
    sharing.annotate(result.deployments, beside.sharing)
    for r in result.deployments:
        found = fleet.findings(path, r, settings, rules, check_deployment)
        findings.extend(found)
        owners.extend([r] * len(found))
    if not result.deployments and not any(i.code in _READ_OR_SAID for i in file_issues):
        from kvlint.extract import unread

        file_issues.extend(unread.issues(loaded.documents, path))  # a GPU container or engine command: said
    found = check_file_issues(path, file_issues, settings, rules)
    findings.extend(found)
    owners.extend([None] * len(found))
    outcome = suppress.apply(findings, owners, result.deployments, loaded, settings)
    final = _enabled(outcome.kept, settings, path)
    result.suppressed = sorted(_enabled(outcome.suppressed, settings, path), key=Finding.sort_key)
    source = loaded.source.lines if loaded.source.text else []
    for f in final:
        f.where = _inside(f.where, source, path)
    result.findings = _cap_per_rule(sorted(_dedupe(final), key=Finding.sort_key))
    cited = {f.where.line for f in result.findings}
    if any(f.fixes for f in result.findings):
        from kvlint.fix.materialize import materialize

        editable = (
            bool(loaded.source.text)
            and loaded.source.helm_template is None
            and not any(i.code == INVALID_INPUT for i in loaded.issues)
        )
        materialize(result.findings, loaded.source.text, editable)
        cited.update(e.where.line for f in result.findings for x in f.fixes for e in x.edits)
    if physical.needed(loaded.source.text):  # NEL/LS/PS: YAML counts them as line breaks, editors do not
        phys = physical.Physical(loaded.source.text)
        for f in (*result.findings, *result.suppressed):
            phys.move(f, path)
        source = phys.lines
        cited = {f.where.line for f in result.findings}
        cited.update(e.where.line for f in result.findings for x in f.fixes for e in x.edits)
    result.lines = {  # only these: the file's text is not kept once it is linted
        n: source[n - 1] for n in sorted(cited) if 1 <= n <= len(source)
    }
    return result


@record
class Beside:
    """What workloads refer to by name, from the file and the YAML files of its directory: DRA
    claims and device classes, and the GPU device plugin's time-slicing / MPS replicas."""

    dra: Known | None = None  # read only when a workload names a claim
    sharing: list[sharing.Replicas] = field(default_factory=list)

    @classmethod
    def of(cls, nearby: Nearby, claims: bool) -> Beside:
        out = cls()
        if not claims:
            for found in nearby.objects(("ConfigMap",)):
                out.sharing.extend(sharing.replicas(found.root, found.file))
            return out
        from kvlint.extract import dra

        out.dra = dra.Known()
        for found in nearby.objects((*dra.KINDS, "ConfigMap")):
            if dra.is_dra(found.root):
                out.dra.add(found.root, found.file)
            else:
                out.sharing.extend(sharing.replicas(found.root, found.file))
        return out


def _enabled(findings: list[Finding], settings: Settings, path: str) -> list[Finding]:
    """The findings of rules enabled for this file, at their configured severity."""
    final: list[Finding] = []
    enabled_cache: dict[str, bool] = {}
    for f in findings:
        if f.rule not in enabled_cache:
            enabled_cache[f.rule] = settings.enabled(f.rule, path)
        if enabled_cache[f.rule]:
            f.severity = settings.severity_of(f.rule, f.severity)
            final.append(f)
    return final


def _inside(w: Location, source: list[str], path: str) -> Location:
    """A position inside the file. Positions come from the parser and from nested YAML moved into
    place (serveConfigV2, vLLM --config); one that lands past the end of a line or of the file is
    reported at the nearest real position rather than at one no editor can show."""
    if w.file != path or not source:
        return w
    last = len(source)
    line = min(max(w.line, 1), last)
    column = min(max(w.column, 1), len(source[line - 1]) + 1)
    end_line, end_column = w.end_line, w.end_column
    if end_line is not None:
        end_line = min(max(end_line, line), last)
        if end_column is not None:
            end_column = min(max(end_column, 1), len(source[end_line - 1]) + 1)
            if (end_line, end_column) < (line, column):
                end_line, end_column = line, column
    if (line, column, end_line, end_column) == (w.line, w.column, w.end_line, w.end_column):
        return w
    return Location(w.file, line, column, end_line, end_column)


def _too_many_workloads(doc, path: str) -> Issue:
    root = doc.root
    where = root.where(path) if root is not None and hasattr(root, "where") else Location(path, 1, 1)
    return Issue(
        NOT_CHECKABLE,
        f"more than {WORKLOADS_MAX:,} serving workloads in one file: this document and the rest are not checked",
        where,
        fix="split the file",
    )


def _cap_per_rule(findings: list[Finding]) -> list[Finding]:
    """At most FINDINGS_PER_RULE_MAX findings of one rule per file, then one saying how many more."""
    counts: dict[str, int] = {}
    out: list[Finding] = []
    for f in findings:
        n = counts[f.rule] = counts.get(f.rule, 0) + 1
        if n <= FINDINGS_PER_RULE_MAX:
            out.append(f)
    for rule, n in counts.items():
        if n > FINDINGS_PER_RULE_MAX:
            first = [f for f in findings if f.rule == rule][FINDINGS_PER_RULE_MAX]
            more = n - FINDINGS_PER_RULE_MAX
            out.append(
                Finding(
                    rule,
                    first.name,
                    first.severity,
                    f"{more:,} more {rule} finding{'s' if more != 1 else ''} in this file, not listed "
                    f"(kvlint lists at most {FINDINGS_PER_RULE_MAX} per rule per file)",
                    first.where,
                )
            )
    return sorted(out, key=Finding.sort_key)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple] = set()
    out = []
    for f in findings:
        key = (f.rule, f.where.line, f.where.column, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


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
        lambda: lint_loaded(load_bytes(data, display, settings.max_file_size), settings, base_dir, real_path),
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
