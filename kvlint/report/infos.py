"""Infos in the text report: counted by reason in one block, listed one by one only on request.

An info is what kvlint could not check, or checked on an assumption, and nothing the author wrote is
wrong: listed once per workload they bury the errors and warnings. The text report therefore lists errors and
warnings, and sums the infos up once per run, one line per reason — the rule and the kind of the
issue behind it (`IssueKind`), with the rule's `infos` text saying what to do; a text that says
"{device}" names the workloads' device ("GPU", "chip" on a TPU), one line per device. `--show-infos` (or
`show-infos: true` in the configuration) lists them one by one as before. JSON, SARIF and the
other formats keep every finding.
"""

from __future__ import annotations

from collections import Counter

from kvlint.findings import Finding, IssueKind, Severity


def shown(settings) -> bool:
    """Infos are listed one by one (--show-infos, or `show-infos: true`)."""
    return bool(getattr(settings, "show_infos", False))


def listed(findings: list[Finding], settings) -> list[Finding]:
    """The findings the text report lists: all of them with --show-infos, else errors and warnings."""
    if shown(settings):
        return findings
    return [f for f in findings if f.severity is not Severity.INFO]


def reasons(findings: list[Finding]) -> list[tuple[int, str, str]]:
    """(count, rule, what — what to do) for the infos among `findings`, most frequent first."""
    counts: Counter[tuple[str, IssueKind | None, str | None]] = Counter(
        (f.rule, f.kind, f.device) for f in findings if f.severity is Severity.INFO
    )
    texts: Counter[tuple[str, str]] = Counter()
    for (rule, kind, device), n in counts.items():
        texts[(rule, _text(rule, kind, device))] += n
    return sorted(((n, rule, text) for (rule, text), n in texts.items()), key=lambda r: (-r[0], r[1], r[2]))


def _text(code: str, kind: IssueKind | None, device: str | None = None) -> str:
    """The reason's text: the rule's `infos` for the kind, "{device}" in it the workloads' device."""
    from kvlint.rules import get

    rule = get(code)
    if rule is None:  # a finding of no registered rule (none today): its code says what it is
        return code
    said = rule.infos.get(kind) or rule.infos.get(None)
    return (said or f"{rule.summary().rstrip('.')} — each is listed with --show-infos").replace(
        "{device}", device or "GPU"
    )


def block(findings: list[Finding], settings) -> list[str]:
    """The summary lines for the infos the report does not list, or none."""
    if shown(settings):
        return []
    rows = reasons(findings)
    if not rows:
        return []
    total = sum(n for n, _, _ in rows)
    head = (
        f"kvlint: {total} info{'s' if total != 1 else ''} by reason, not listed "
        "(--show-infos lists them; JSON and SARIF carry every one):"
    )
    width = len(str(rows[0][0]))
    out = [head]
    for n, rule, text in rows:
        what, _, todo = text.partition(" — ")
        out.append(f"  {n:>{width}} {rule} {what}")
        if todo:
            out.append(f"  {'':>{width}} {'':5} -> {todo}")
    return [*out, ""]
