"""Suppressions: `# kvlint: disable…` comments and `kvlint.io/ignore` annotations applied to a
file's findings, and what they suppressed, kept so every report can say how many and where.

Matching is linear: line directives are indexed by the line they cover, file directives by rule,
and an annotation applies only to findings of the workload object that carries it (its own
namespace and document, never another object with the same Kind/name). A directive naming `all`
is refused (KV006): a reviewer should see which rules a comment switches off.
"""

from __future__ import annotations

from collections import defaultdict

from kvlint.codes import UNUSED_SUPPRESSION
from kvlint.findings import Applicability, Edit, Finding, Fix, Location
from kvlint.load import LoadedFile
from kvlint.record import field, record
from kvlint.resolve import Resolved
from kvlint.run.settings import Settings


@record
class Outcome:
    kept: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)


def _kv006(message: str, where: Location, fix: str, fixes: tuple[Fix, ...] = ()) -> Finding:
    from kvlint.rules import get

    rule = get(UNUSED_SUPPRESSION)
    assert rule is not None
    return Finding(rule.id, rule.name, rule.severity, message, where, fix=fix, fixes=fixes)


def _codes(names: tuple[str, ...]) -> set[str]:
    from kvlint.rules import get

    out = set()
    for n in names:
        rule = get(n)
        if rule is not None:
            out.add(rule.id)
    return out


def apply(
    findings: list[Finding],
    owners: list[Resolved | None],
    deployments: list[Resolved],
    loaded: LoadedFile,
    settings: Settings,
) -> Outcome:
    """`owners[i]` is the workload whose rules produced `findings[i]` (None for file-level ones)."""
    from kvlint.rules import all_rules, get

    if not settings.inline_suppressions:
        return Outcome(kept=list(findings))
    directives = loaded.directives
    by_line: dict[int, list[tuple[int, set[str]]]] = defaultdict(list)
    by_file: dict[str, int] = {}
    for i, d in enumerate(directives):
        if d.kind == "line" and d.covers_line:
            by_line[d.covers_line].append((i, _codes(d.rules)))
        elif d.kind == "file":
            for code in _codes(d.rules):
                by_file.setdefault(code, i)
    used: set[int] = set()
    used_annotations: set[tuple[str, Location]] = set()
    annotations = {
        (code, where): None for r in deployments for code, (_, where) in r.deployment.ignores.items()
    }
    unsuppressible = {rule.id for rule in all_rules() if not rule.suppressible}
    out = Outcome()
    for f, owner in zip(findings, owners, strict=True):
        ignores = owner.deployment.ignores if owner is not None else {}
        if f.rule in unsuppressible:  # KV001: an unreadable file has no trustworthy comments
            out.kept.append(f)
            continue
        by: str | None = None
        # a line comment covers a line of this file, not the same line number of a file beside it (a
        # KServe runtime's value); file-wide comments and the workload's annotations still apply
        here = f.where.file == loaded.path
        for i, codes in by_line.get(f.where.line, ()) if here else ():
            if f.rule in codes:
                used.add(i)
                by = by or f"comment at {directives[i].where}"
        if f.rule in by_file:
            i = by_file[f.rule]
            used.add(i)
            by = by or f"disable-file comment at {directives[i].where}"
        for code, (_reason, where) in ignores.items():
            rule = get(code)
            if rule is not None and rule.id == f.rule:
                used_annotations.add((code, where))
                by = by or f"kvlint.io/ignore annotation at {where}"
        if by is None:
            out.kept.append(f)
        else:
            f.suppressed_by = by
            out.suppressed.append(f)
    out.kept.extend(_directive_problems(directives, used))
    out.kept.extend(_annotation_problems(annotations, used_annotations))
    return out


def _directive_problems(directives, used: set[int]) -> list[Finding]:
    from kvlint.rules import get

    problems = []
    for i, d in enumerate(directives):
        if d.kind == "bad":
            problems.append(
                _kv006(
                    f"cannot read this kvlint comment: {d.reason!r}",
                    d.where,
                    "write `# kvlint: disable=KV103 -- reason` or `# kvlint: disable-file=KV103`",
                )
            )
        elif any(n.lower() == "all" for n in d.rules):
            problems.append(
                _kv006(
                    "a suppression cannot name `all`; it suppresses nothing",
                    d.where,
                    "name the rules it is meant to switch off, e.g. `# kvlint: disable=KV103 -- reason`",
                )
            )
        elif unknown := [n for n in d.rules if get(n) is None]:
            problems.append(
                _kv006(
                    f"suppression names no kvlint rule: {', '.join(unknown)}",
                    d.where,
                    "use a rule code or name from `kvlint rules`",
                )
            )
        elif i not in used:
            problems.append(
                _kv006(
                    f"suppression of {', '.join(d.rules)} matches no finding",
                    d.where,
                    "delete the comment",
                    (Fix("delete the comment", Applicability.SAFE, (Edit(d.where, ""),)),),
                )
            )
    return problems


def _annotation_problems(annotations, used: set[tuple[str, Location]]) -> list[Finding]:
    from kvlint.rules import get

    problems = []
    for code, where in annotations:
        if get(code) is None:
            problems.append(
                _kv006(
                    f"kvlint.io/ignore names no kvlint rule: {code}",
                    where,
                    "use a rule code from `kvlint rules`",
                )
            )
        elif (code, where) not in used:
            problems.append(
                _kv006(
                    f"kvlint.io/ignore of {code} matches no finding", where, "remove it from the annotation"
                )
            )
    return problems
