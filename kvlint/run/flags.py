"""The settings one run uses: the configuration file (if any) first, then command-line flags on top.

Shared by the command (`kvlint check`) and the `--jobs` worker processes, which rebuild the same
settings from the same options.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvlint.findings import Severity

if TYPE_CHECKING:
    from kvlint.run.settings import Settings


def _split(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def build_settings(opts: dict[str, Any]) -> tuple[Settings | None, str | None]:
    """Configuration file (if any) first, then command-line flags on top."""
    from kvlint.run.config import ConfigError, load_settings

    try:
        settings = load_settings(opts.get("config_path"), bool(opts.get("isolated")))
    except ConfigError as exc:
        return None, str(exc)
    if opts.get("gpu"):
        settings.defaults.gpu = opts["gpu"]
        settings.defaults.gpu_source = "GPU from --gpu"
        settings.sources["gpu"] = "--gpu"
    if opts.get("engine"):
        settings.defaults.engine = opts["engine"]
        settings.sources["engine"] = "--engine"
    if opts.get("engine_version"):
        settings.defaults.engine_version = opts["engine_version"]
        settings.sources["engine-version"] = "--engine-version"
    if opts.get("select"):
        settings.select = _split(opts["select"])
        settings.sources["select"] = "--select"
    if opts.get("extend_select"):
        settings.extend_select += _split(opts["extend_select"])
        settings.sources["extend-select"] = "--extend-select"
    if opts.get("ignore"):
        settings.ignore += _split(opts["ignore"])
        settings.sources["ignore"] = "--ignore"
    if opts.get("fail_on"):
        settings.fail_on = Severity.parse(opts["fail_on"])
        settings.sources["fail-on"] = "--fail-on"
    if opts.get("hub"):
        settings.defaults.hub = True
        settings.sources["hub"] = "--hub"
    if opts.get("strict"):
        settings.strict = True
        settings.sources["strict"] = "--strict"
    if opts.get("no_inline_suppressions"):
        settings.inline_suppressions = False
        settings.sources["inline-suppressions"] = "--no-inline-suppressions"
    if opts.get("show_suppressed"):
        settings.show_suppressed = True
    if opts.get("show_infos"):
        settings.show_infos = True
        settings.sources["show-infos"] = "--show-infos"
    if opts.get("exclude"):
        settings.exclude += list(opts["exclude"])
        settings.sources["exclude"] = "--exclude"
    if opts.get("no_gitignore"):
        settings.respect_gitignore = False
        settings.sources["respect-gitignore"] = "--no-gitignore"
    if opts.get("max_file_size"):
        settings.max_file_size = int(opts["max_file_size"])
        settings.sources["max-file-size"] = "--max-file-size"
    unknown = [n for n in settings.select or [] if not _known_rule(n)] + [
        n for n in settings.ignore + settings.extend_select if not _known_rule(n)
    ]
    if unknown:
        return None, f"unknown rule code or name: {', '.join(unknown)} (see `kvlint rules`)"
    return settings, None


def _known_rule(name: str) -> bool:
    from kvlint.rules import all_rules

    key = name.strip()
    return key.upper() == "ALL" or any(
        r.id.startswith(key.upper()) or r.name == key.lower() for r in all_rules()
    )
