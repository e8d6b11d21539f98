"""Repository content that replaces kvlint's facts or switches its checks off is never silent
(security review 3, class C: S2, S9, S19). A pull request can add any file to the repository, so
each of these is an `Override` that every report shows (text and concise: a note; github: one
`::warning title=kvlint configuration`; JSON: `config_overrides`; SARIF: a tool configuration
notification; Markdown: a line of the summary), with where it came from:

- a pulled model (`.kvlint/models/*.json`, which every check reads first) whose id kvlint's shipped
  catalog knows: the pulled config replaces the shipped facts (S2);
- configuration that disables rules: `ignore`, `select` (every rule it leaves out), `per-file-ignores`,
  and `severity` set below a rule's default, all in one note (S19);
- `hub: true` in a configuration file is not honoured (S9): fetching from the Hub uses the runner's
  network and its HF_TOKEN for model ids the repository chose, so only the command line (`--hub`)
  turns it on; the note says so.
"""

from __future__ import annotations

from typing import Any

from kvlint.run.settings import Override, Settings


def pulled_overrides(directory: str | None = None) -> list[Override]:
    """One note per pulled entry whose id the shipped catalog answers to (the directory is listed once)."""
    from kvlint.catalog import models, pulled
    from kvlint.fileio import shown

    out = []
    for ident, path in sorted(pulled.entries(directory or pulled.models_dir()).items()):
        row = models.lookup(ident)
        if row is not None:
            out.append(
                Override(
                    shown(path),
                    f"pulled copy of {row['id']} replaces kvlint's catalog entry for it: every workload "
                    "serving it is checked with the pulled config",
                )
            )
    return out


def disabled_rules(cfg: dict[str, Any], s: Settings, origin: str, locate) -> list[Override]:
    """The configuration file's settings that switch rules off or down, as one note."""
    from kvlint.rules import all_rules, get

    parts: list[str] = []
    first = None
    if cfg.get("ignore"):
        parts.append(f"ignore: {', '.join(cfg['ignore'])}")
        first = first or locate(("ignore",))
    if cfg.get("select") is not None:
        chosen = s.codes(list(cfg["select"])) | s.codes(list(cfg.get("extend_select") or []))
        off = [r.id for r in all_rules() if r.id not in chosen]
        if off:
            parts.append(f"select: {', '.join(cfg['select'])} (turns off {', '.join(off)})")
            first = first or locate(("select",))
    if cfg.get("per_file_ignores"):
        listed = "; ".join(f"{glob!r}: {', '.join(codes)}" for glob, codes in cfg["per_file_ignores"].items())
        parts.append(f"per-file-ignores: {listed}")
        first = first or locate(("per_file_ignores",))
    from kvlint.findings import Severity

    lowered = []
    for code, sev in (cfg.get("severity") or {}).items():
        rule = get(code)
        if rule is not None and Severity.parse(sev) < rule.severity:
            lowered.append(f"{rule.id} lowered from {rule.severity.label} to {Severity.parse(sev).label}")
    if lowered:
        parts.append(f"severity: {', '.join(lowered)}")
        first = first or locate(("severity",))
    if not parts:
        return []
    return [Override(first or origin, "the configuration switches rules off or down: " + "; ".join(parts))]


def hub_from_config(cfg: dict[str, Any], locate) -> list[Override]:
    if not cfg.get("hub"):
        return []
    return [
        Override(
            locate(("hub",)),
            "hub: true is not honoured from a configuration file (a pull request can add it, and "
            "fetching uses the runner's network and HF_TOKEN): pass --hub on the command line",
        )
    ]
