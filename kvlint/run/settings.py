"""The settings in force for one run: rule selection, severities, defaults and thresholds.

A plain record, cheap to build; reading and validating configuration files is `config.py`'s
job (pydantic, loaded only when a configuration file exists).
"""

from __future__ import annotations

import os

from kvlint.codes import MATCHED_BY_NAME, NOT_CHECKABLE, UNKNOWN_GPU, UNKNOWN_MODEL, UNPARSED_SETTING
from kvlint.findings import Severity
from kvlint.load.source import DEFAULT_MAX_BYTES
from kvlint.record import field, record
from kvlint.resolve import Defaults
from kvlint.rules.base import Thresholds

# Rules that report what kvlint could not check (or only guessed, KV007); --strict makes them errors.
COVERAGE_RULES = (UNKNOWN_GPU, UNKNOWN_MODEL, NOT_CHECKABLE, UNPARSED_SETTING, MATCHED_BY_NAME)


@record
class Override:
    """A configuration entry that replaces one of kvlint's shipped catalog entries."""

    where: str  # `file:line:col` of the entry in the configuration file
    message: str


@record
class Settings:
    select: list[str] | None = None  # None: every rule
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    fail_on: Severity = Severity.ERROR
    defaults: Defaults = field(default_factory=Defaults)
    thresholds: Thresholds = field(default_factory=Thresholds)
    max_file_size: int = DEFAULT_MAX_BYTES
    strict: bool = False
    inline_suppressions: bool = True
    show_suppressed: bool = False  # list suppressed findings (the count is always reported)
    show_infos: bool = False  # the text report lists infos one by one (else counts them by reason)
    exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    sources: dict[str, str] = field(default_factory=dict)  # setting -> where its value came from
    config_file: str | None = None
    config_dir: str | None = None  # per-file-ignores patterns are relative to it
    extra_gpus: list[dict] = field(default_factory=list)  # the configuration's gpus: (catalog rows)
    extra_models: list[dict] = field(default_factory=list)  # the configuration's models:
    overrides: list[Override] = field(default_factory=list)  # those replacing a shipped entry (F20)

    def register_catalog(self) -> None:
        """Make the catalogs the shipped ones plus this configuration's entries (a `--jobs` worker
        calls it with the settings it was given, under any start method)."""
        from kvlint.catalog import gpus, models

        gpus.register_gpus(self.extra_gpus)
        models.register_models(self.extra_models)

    def codes(self, names: list[str]) -> set[str]:
        """The rule ids `names` (codes, prefixes, names or ALL) select."""
        return self._codes(names)

    def _codes(self, names: list[str]) -> set[str]:
        from kvlint.rules import all_rules

        out: set[str] = set()
        for n in names:
            key = n.strip()
            for rule in all_rules():
                if (
                    key.upper() == "ALL"
                    or rule.id == key.upper()
                    or rule.name == key.lower()
                    or rule.id.startswith(key.upper())
                ):
                    out.add(rule.id)
        return out

    def enabled(self, rule_id: str, path: str) -> bool:
        """ruff's model: select (or all), plus extend-select, minus ignore, minus per-file-ignores."""
        chosen = self._codes(self.select) if self.select is not None else None
        if chosen is not None and rule_id not in chosen and rule_id not in self._codes(self.extend_select):
            return False
        if rule_id in self._codes(self.ignore):
            return False
        if self.per_file_ignores:
            rel = os.path.relpath(os.path.abspath(path), self.config_dir or os.getcwd())
            for pattern, codes in self.per_file_ignores.items():
                if _path_matches(rel, pattern) and rule_id in self._codes(codes):
                    return False
        return True

    def severity_of(self, rule_id: str, default: Severity) -> Severity:
        if rule_id in self.severity:
            return self.severity[rule_id]
        if self.strict and rule_id in COVERAGE_RULES:
            return Severity.ERROR
        return default


def _path_matches(rel: str, pattern: str) -> bool:
    """gitignore-style, relative to the configuration's directory (the same matcher as --exclude):
    `examples/*` is `<config dir>/examples/*`, never `prod/examples/…` nor a file outside that
    directory; `*.yaml` (no slash) matches a name at any depth below it."""
    from kvlint.wildmatch import compile_pattern, normalize

    rel = normalize(rel)
    if not rel or rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        return False
    text = pattern.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    compiled = compile_pattern(text)
    if compiled is None:
        return False
    names = rel.split("/")
    parents = ("/".join(names[:depth]) for depth in range(1, len(names)))
    return any(compiled.matches(p, True) for p in parents) or compiled.matches(rel, False)
