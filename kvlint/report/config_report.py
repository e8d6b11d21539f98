"""`kvlint config`: every setting in force, its value and where it came from, and the catalog
entries the configuration adds or replaces.

Values come from the configuration file (input), so each is neutralised with `safe.plain` and the
file's name with `safe.path`, exactly as the lint report does: no control character, ANSI escape,
lone surrogate or line break reaches the terminal or a CI log, and no line starts with `::`.
"""

from __future__ import annotations

from kvlint import engines
from kvlint.report import safe


def overrides(settings) -> list[tuple[str, str]]:
    """(where, message) of each configuration entry that replaces a shipped catalog entry, neutralised
    for a terminal or log (each line-based format escapes further for itself)."""
    return [(safe.path(o.where), safe.plain(o.message)) for o in settings.overrides]


def render(s) -> str:
    def src(key: str) -> str:
        return s.sources.get(key, "default")

    rows = [
        ("config file", s.config_file or "(none found)", ""),
        ("select", ", ".join(s.select) if s.select is not None else "all rules", src("select")),
        ("extend-select", ", ".join(s.extend_select) or "-", src("extend-select")),
        ("ignore", ", ".join(s.ignore) or "-", src("ignore")),
        (
            "per-file-ignores",
            "; ".join(f"{k}: {', '.join(v)}" for k, v in s.per_file_ignores.items()) or "-",
            src("per-file-ignores"),
        ),
        ("severity", ", ".join(f"{k}={v.label}" for k, v in s.severity.items()) or "-", src("severity")),
        ("fail-on", s.fail_on.label, src("fail-on")),
        ("gpu", s.defaults.gpu or "-", src("gpu")),
        ("fleet", ", ".join(s.defaults.fleet) or "-", src("fleet")),
        ("engine", s.defaults.engine or engines.DEFAULT, src("engine")),
        ("engine-version", s.defaults.engine_version or "latest modelled", src("engine-version")),
        ("headroom-margin", f"{s.thresholds.kv103_margin:g}", src("headroom-margin")),
        ("fragmentation", f"{s.thresholds.fragmentation:g}", src("fragmentation")),
        ("declared-tolerance", f"{s.thresholds.declared_tolerance:g}", src("declared-tolerance")),
        ("expected-tokens", f"{s.thresholds.expected_tokens:,}", src("expected-tokens")),
        ("max-file-size", f"{s.max_file_size:,}", src("max-file-size")),
        ("strict", str(s.strict).lower(), src("strict")),
        ("inline-suppressions", str(s.inline_suppressions).lower(), src("inline-suppressions")),
        ("show-infos", str(s.show_infos).lower(), src("show-infos")),
        ("exclude", ", ".join(s.exclude) or "-", src("exclude")),
        ("respect-gitignore", str(s.respect_gitignore).lower(), src("respect-gitignore")),
        ("gpus", ", ".join(g["id"] for g in s.extra_gpus) or "-", src("gpus")),
        ("models", ", ".join(m["id"] for m in s.extra_models) or "-", src("models")),
    ]
    width = max(len(r[0]) for r in rows)
    out = [
        f"{key:<{width}}  {safe.path(value) if key == 'config file' else safe.plain(value)}"
        + (f"  ({safe.path(origin)})" if origin else "")
        for key, value, origin in rows
    ]
    replaced = overrides(s)
    if replaced:
        out.append(
            f"{len(replaced)} configuration entr{'y replaces' if len(replaced) == 1 else 'ies replace'} "
            "kvlint's shipped catalog:"
        )
        out += [f"  {where}: {message}" for where, message in replaced]
    return "\n".join(out) + "\n"
