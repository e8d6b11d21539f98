"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

    ::error file=deploy.yaml,line=12,col=7,endLine=12,endColumn=13,title=KV102 kv-cache-below-max-context::…

Property values escape %, CR, LF, `:` and `,`; the message escapes %, CR and LF (@actions/core
escapeProperty / escapeData). `col`/`endColumn` are left out when the range spans lines.
"""

from __future__ import annotations

from kvlint.findings import Severity

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(run, settings, color: bool = False) -> str:
    out = []
    for f in run.findings:
        w = f.where
        props = [f"file={escape_property(w.file)}", f"line={w.line}"]
        single = w.end_line in (None, w.line)
        if single:
            props.append(f"col={w.column}")
        if w.end_line:
            props.append(f"endLine={w.end_line}")
        if single and w.end_column:
            props.append(f"endColumn={w.end_column}")
        props.append(f"title={escape_property(f'{f.rule} {f.name}')}")
        body = f.message
        if f.fix:
            body += f"\nfix: {f.fix}"
        out.append(f"::{_LEVEL[f.severity]} {','.join(props)}::{escape_data(body)}")
    from kvlint.report import suppressed

    if suppressed.summary(run):  # a reviewer sees that something was switched off, and where
        text = "\n".join(
            [suppressed.summary(run)] + (suppressed.lines(run) if suppressed.shown(settings) else [])
        )
        out.append(f"::notice title=kvlint suppressions::{escape_data(text)}")
    from kvlint.report import config_report

    for where, message in config_report.overrides(settings):  # the configuration rewrote a catalog fact
        out.append(f"::warning title=kvlint configuration::{escape_data(f'{where}: {message}')}")
    return "\n".join(out) + ("\n" if out else "")
