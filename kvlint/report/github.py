"""`--format github`: GitHub Actions workflow commands, one annotation per error and warning.

    ::error file=deploy.yaml,line=12,col=7,endLine=12,endColumn=13,title=KV102 kv-cache-below-max-context::…

Infos are summed up in one `::notice title=kvlint infos::` by reason, the block the text report prints
(report/infos.py); `--show-infos` (or `show-infos: true`) gives each its own notice instead.

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
    from kvlint.report import infos

    out = []
    for f in infos.listed(run.findings, settings):
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
    summary = [line for line in infos.block(run.findings, settings) if line]
    if summary:  # the infos not listed: one notice, as the text report's block
        out.append(f"::notice title=kvlint infos::{escape_data(chr(10).join(summary))}")
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
