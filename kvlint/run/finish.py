"""From the rules' findings to the file's result: suppressions, the rules enabled for the file and
their severities, positions kept inside the file, at most FINDINGS_PER_RULE_MAX per rule, fixes made
exact against the source, physical line numbers, and the source lines the findings cite."""

from __future__ import annotations

from kvlint.bounds import FINDINGS_PER_RULE_MAX
from kvlint.codes import INVALID_INPUT
from kvlint.findings import Finding, Location
from kvlint.load import LoadedFile, physical
from kvlint.resolve import Resolved
from kvlint.run import suppress
from kvlint.run.settings import Settings


def settle(
    loaded: LoadedFile,
    settings: Settings,
    findings: list[Finding],
    owners: list[Resolved | None],
    deployments: list[Resolved],
) -> tuple[list[Finding], list[Finding], dict[int, str]]:
    """(findings, suppressed, cited source lines) of the file. `owners`: the workload whose rules
    produced each finding (None for the file's own issues)."""
    path = loaded.path
    outcome = suppress.apply(findings, owners, deployments, loaded, settings)
    final = _enabled(outcome.kept, settings, path)
    suppressed = sorted(_enabled(outcome.suppressed, settings, path), key=Finding.sort_key)
    source = loaded.source.lines if loaded.source.text else []
    for f in final:
        f.where = _inside(f.where, source, path)
    kept = _cap_per_rule(sorted(_dedupe(final), key=Finding.sort_key))
    if any(f.fixes for f in kept):
        _materialize(kept, loaded)
    if physical.needed(loaded.source.text):  # NEL/LS/PS: YAML counts them as line breaks, editors do not
        phys = physical.Physical(loaded.source.text)
        for f in (*kept, *suppressed):
            phys.move(f, path)
        source = phys.lines
    cited = {f.where.line for f in kept}
    cited.update(e.where.line for f in kept for x in f.fixes for e in x.edits)
    lines = {  # only these: the file's text is not kept once it is linted
        n: source[n - 1] for n in sorted(cited) if 1 <= n <= len(source)
    }
    return kept, suppressed, lines


def _materialize(findings: list[Finding], loaded: LoadedFile) -> None:
    """Each fix's edits made exact against the source; a fix is applicable only where the file is
    the text kvlint read (not a rendered Helm template, not an input it could not parse)."""
    from kvlint.fix.materialize import materialize

    editable = (
        bool(loaded.source.text)
        and loaded.source.helm_template is None
        and not any(i.code == INVALID_INPUT for i in loaded.issues)
    )
    materialize(findings, loaded.source.text, editable)


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
