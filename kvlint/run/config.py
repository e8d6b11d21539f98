"""Configuration: `[tool.kvlint]` in pyproject.toml or `.kvlint.yaml`, found upward from the
current directory (the closest wins; in one directory `.kvlint.yaml` before pyproject.toml).
One pydantic model validates it; a bad file is a located error (exit 2). Flags override it.

    # .kvlint.yaml
    select: [KV1, KV2, KV3]
    ignore: [KV004]
    per-file-ignores: {"examples/*": [KV103]}
    severity: {KV103: error}
    fail-on: warning
    gpu: H100                     # assumed where a workload does not say
    fleet: [L4, A100-80GB, H100]  # or: the cluster's GPU types; capacity is checked on each
    engine-version: "0.10.1"
    show-infos: true              # the text report lists every info (else counts them by reason)
    headroom-margin: 0.1          # KV103 asks for 10 % spare
    fragmentation: 0.05
    expected-tokens: 5000         # KV103: a typical request (prompt + output), beside the worst case
    gpus: [{id: h20, name: NVIDIA H20, memory: 95.0GiB, compute-capability: "9.0"}]
    models: [{id: acme/llama-ft, config: {...config.json keys...}}]
"""

from __future__ import annotations

import os
from typing import Any

from kvlint.findings import Severity
from kvlint.run.settings import Override, Settings

CONFIG_NAMES = (".kvlint.yaml", ".kvlint.yml")


class ConfigError(Exception):
    """A configuration problem, with file:line where known."""


MAX_CONFIG_BYTES = 1024 * 1024  # a configuration file is read only up to this (a real one is ~1 KB)


def find_config(start: str | None = None) -> str | None:
    """The closest configuration file upward. A name that exists but is not a regular file (a
    FIFO, a device, a link to /dev/zero) is returned too: reading it is then a clear error, never
    a hang and never a silent fall back to the defaults."""
    directory = os.path.realpath(start or os.getcwd())
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(directory, name)
            if os.path.lexists(candidate):
                return candidate
        pyproject = os.path.join(directory, "pyproject.toml")
        if os.path.lexists(pyproject) and _has_tool_table(pyproject):
            return pyproject
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _has_tool_table(path: str) -> bool:
    """Whether pyproject.toml may configure kvlint; True when it cannot be read (the reader says why)."""
    from kvlint.fileio import read_regular

    try:
        data = read_regular(path, MAX_CONFIG_BYTES)
    except OSError:
        return os.path.exists(path)  # a dangling link configures nothing; anything else is reported
    return b"[tool.kvlint" in data


def _read_text(path: str) -> str:
    """The configuration file's text: only a regular file, read capped by bytes read."""
    from kvlint.fileio import NotRegular, TooLarge, read_text

    try:
        return read_text(path, MAX_CONFIG_BYTES)
    except NotRegular:
        raise ConfigError(f"{path}: not a regular file (a directory, pipe or device); not read") from None
    except TooLarge:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES:,} bytes; not read") from None


def _model():
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    from kvlint import engines

    engine_name = Literal[engines.names()]  # the engines the registry lists (kvlint/engines/__init__.py)

    def kebab(name: str) -> str:
        return name.replace("_", "-")

    class GpuEntry(BaseModel):
        model_config = ConfigDict(extra="forbid", alias_generator=kebab, populate_by_name=True)
        id: str
        name: str | None = None
        memory: str | int = Field(description="memory the engine sees, e.g. 95.0GiB or a byte count")
        compute_capability: str | None = None
        bf16: bool | None = None
        fp8: bool | None = None
        aliases: list[str] = []
        labels: dict[str, list[str]] = {}

    class ModelEntry(BaseModel):
        model_config = ConfigDict(extra="forbid", alias_generator=kebab, populate_by_name=True)
        id: str
        aliases: list[str] = []
        source: str = "kvlint configuration"
        config: dict[str, Any]

    class KvlintConfig(BaseModel):
        model_config = ConfigDict(extra="forbid", alias_generator=kebab, populate_by_name=True)
        select: list[str] | None = None
        extend_select: list[str] = []
        ignore: list[str] = []
        per_file_ignores: dict[str, list[str]] = {}
        severity: dict[str, Literal["error", "warning", "info"]] = {}
        fail_on: Literal["error", "warning", "info"] | None = None
        gpu: str | None = None
        fleet: list[str] = []
        engine: engine_name | None = None
        engine_version: str | None = None
        headroom_margin: float | None = Field(default=None, ge=0, le=10)
        fragmentation: float | None = Field(default=None, ge=0, lt=1)
        declared_tolerance: float | None = Field(default=None, gt=0, lt=1)
        expected_tokens: int | None = Field(default=None, gt=0, le=100_000_000)
        max_file_size: int | None = Field(default=None, gt=0)
        strict: bool | None = None
        hub: bool | None = None
        inline_suppressions: bool | None = None
        show_infos: bool | None = None
        exclude: list[str] = []
        respect_gitignore: bool | None = None
        format: Literal["text", "concise", "json", "sarif", "github", "markdown"] | None = None
        gpus: list[GpuEntry] = []
        models: list[ModelEntry] = []

    return KvlintConfig


def _fleet(names: list[str], s: Settings, origin: str) -> None:
    """`fleet: [L4, A100-80GB, H100]`: every name must be a card kvlint knows with its memory."""
    from kvlint.catalog.gpus import ambiguous, lookup, suggest

    for name in names:
        spec = lookup(name)
        if spec is None:
            amb = ambiguous(name)
            hint = (
                f"it is sold as {', '.join(amb)}"
                if amb
                else (
                    "did you mean " + ", ".join(suggest(name)) + "?"
                    if suggest(name)
                    else "declare it under gpus:"
                )
            )
            raise ConfigError(f"{origin}: fleet: GPU {name!r} is not one card kvlint knows ({hint})")
        if not spec.engine_bytes:
            raise ConfigError(
                f"{origin}: fleet: the memory of {spec.name} is not known; declare it under gpus:"
            )
    if s.defaults.gpu:
        raise ConfigError(f"{origin}: set either gpu (one type) or fleet (several), not both")
    s.defaults.fleet = tuple(names)
    s.defaults.fleet_source = f"fleet in {os.path.basename(origin)}"


def _read(path: str) -> tuple[dict, Any]:
    """(data, locator) where locator(loc tuple) -> 'file:line' for error messages."""
    text = _read_text(path)
    if os.path.basename(path) == "pyproject.toml":
        try:
            import tomllib  # type: ignore[import-not-found]
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
        tool = data.get("tool", {})
        table = tool.get("kvlint", {}) if isinstance(tool, dict) else {}
        lines = text.splitlines()

        def locate(loc: tuple) -> str:
            key = str(loc[0]) if loc else ""
            start = next((i for i, ln in enumerate(lines) if ln.strip().startswith("[tool.kvlint")), 0)
            for i in range(start, len(lines)):
                stripped = lines[i].strip()
                if stripped.startswith((key + " ", key + "=", f'"{key}"')):
                    return f"{path}:{i + 1}"
            return f"{path}:{start + 1}"

        return table, locate
    from kvlint.load.compose import compose
    from kvlint.load.tree import Mapping, to_plain

    docs, issues = compose(text, path)
    if issues:
        first = issues[0]
        raise ConfigError(f"{first.where}: {first.message}")
    root = docs[0].root if docs else None
    if root is None:
        return {}, lambda loc: f"{path}:1"
    if not isinstance(root, Mapping):
        raise ConfigError(f"{path}:{root.line + 1}: the configuration must be a mapping of settings")

    def locate_yaml(loc: tuple) -> str:
        node = root
        for i, step in enumerate(loc):
            nxt = None
            if isinstance(node, Mapping) and isinstance(step, str):
                key = step if step in node.values else step.replace("_", "-")
                if i == len(loc) - 1 and key in node.keys:
                    k = node.keys[key]
                    return f"{path}:{k.line + 1}:{k.col + 1}"
                nxt = node.values.get(key)
            elif (
                hasattr(node, "items")
                and isinstance(step, int)
                and isinstance(node.items, list)
                and step < len(node.items)
            ):
                nxt = node.items[step]
            if nxt is None:
                break
            node = nxt  # type: ignore[assignment]
        return f"{path}:{node.line + 1}:{node.col + 1}"

    return to_plain(root) or {}, locate_yaml


def load_settings(explicit: str | None = None, isolated: bool = False) -> Settings:
    from kvlint.run.trust import disabled_rules, hub_from_config, pulled_overrides

    settings = Settings()
    settings.register_catalog()  # the shipped catalogs alone, whatever an earlier run registered
    settings.overrides.extend(pulled_overrides())  # read whatever the configuration: --isolated too
    if isolated:
        return settings
    path = explicit or find_config()
    if path is None:
        return settings
    if not explicit:  # shown relative to the working directory: no runner's home in any message
        path = os.path.relpath(path)
    if explicit and not os.path.exists(path):
        raise ConfigError(f"{path}: configuration file not found")
    try:
        data, locate = _read(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}): {exc.reason}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the configuration must be a table of settings")
    values, stated = _validate(data, path, locate)
    _apply(values, stated, settings, path)
    _catalog_entries(values, settings, path, locate)
    settings.overrides.extend(disabled_rules(values, settings, path, locate))
    settings.overrides.extend(hub_from_config(values, locate))
    if values.get("fleet"):
        _fleet(values["fleet"], settings, path)
        settings.sources["fleet"] = locate(("fleet",))  # `kvlint config`: the file and line it came from
    return settings


def _validate(data: dict, path: str, locate) -> tuple[dict[str, Any], list[str]]:
    """(validated values, names of the settings the file states). pydantic runs only when the file
    changed since kvlint last validated it (config_cache): importing it costs more than a lint run."""
    from kvlint.run import config_cache

    hit = config_cache.lookup(data)
    if hit is not None:
        return hit
    from pydantic import ValidationError

    try:
        cfg = _model().model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            key = ".".join(str(p) for p in loc)
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                import difflib

                allowed = sorted(f.alias or n for n, f in _model().model_fields.items())
                close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
                msg = "unknown setting" + (f"; did you mean {close[0]!r}?" if close else "")
            problems.append(f"{locate(loc)}: {key}: {msg}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems)) from None
    values, stated = cfg.model_dump(), sorted(cfg.model_fields_set)
    config_cache.store(data, values, stated)
    return values, stated


def _apply(cfg: dict[str, Any], stated: list[str], s: Settings, origin: str) -> Settings:

    s.config_file = origin
    s.config_dir = os.path.dirname(os.path.abspath(origin))
    if cfg["select"] is not None:
        s.select = list(cfg["select"])
    s.extend_select = list(cfg["extend_select"])
    s.ignore = list(cfg["ignore"])
    s.per_file_ignores = dict(cfg["per_file_ignores"])
    for code, sev in cfg["severity"].items():
        from kvlint.rules import get

        rule = get(code)
        if rule is None:
            raise ConfigError(f"{origin}: severity: no rule {code!r}")
        s.severity[rule.id] = Severity.parse(sev)
    if cfg["fail_on"]:
        s.fail_on = Severity.parse(cfg["fail_on"])
    if cfg["gpu"]:
        s.defaults.gpu = cfg["gpu"]
        s.defaults.gpu_source = f"GPU from the configuration ({origin})"
    s.defaults.engine = cfg["engine"]
    s.defaults.engine_version = cfg["engine_version"]
    if cfg["headroom_margin"] is not None:
        s.thresholds.kv103_margin = cfg["headroom_margin"]
    if cfg["fragmentation"] is not None:
        s.thresholds.fragmentation = cfg["fragmentation"]
    if cfg["declared_tolerance"] is not None:
        s.thresholds.declared_tolerance = cfg["declared_tolerance"]
    if cfg["expected_tokens"] is not None:
        s.thresholds.expected_tokens = cfg["expected_tokens"]
    if cfg["max_file_size"]:
        s.max_file_size = cfg["max_file_size"]
    if cfg["strict"] is not None:
        s.strict = cfg["strict"]
    if cfg["inline_suppressions"] is not None:
        s.inline_suppressions = cfg["inline_suppressions"]
    if cfg["show_infos"] is not None:
        s.show_infos = cfg["show_infos"]
    s.exclude = list(cfg["exclude"])
    if cfg["respect_gitignore"] is not None:
        s.respect_gitignore = cfg["respect_gitignore"]
    if cfg["format"]:
        s.sources["format-value"] = cfg["format"]
    for name in stated:
        s.sources[name.replace("_", "-")] = origin
    return s


def _catalog_entries(cfg: dict[str, Any], s: Settings, origin: str, locate) -> None:
    """Register the configuration's GPUs and models. One that replaces a card or model kvlint
    ships (same id, or for models an id or alias the catalog already answers to) is not silent
    (security review F20): it is recorded in `s.overrides`, located, for every report and
    `kvlint config` to show."""
    from kvlint.catalog import gpus, models
    from kvlint.units import gib, parse_size

    entries = []
    for i, g in enumerate(cfg["gpus"]):
        try:
            memory = parse_size(g["memory"]).bytes
        except ValueError as exc:
            raise ConfigError(f"{origin}: gpus[{g['id']}].memory: {exc}") from None
        shipped = gpus.by_id(g["id"])
        if shipped is not None:
            was = f"{gib(shipped.engine_bytes)} for the engine" if shipped.engine_bytes else "memory unknown"
            s.overrides.append(
                Override(
                    locate(("gpus", i, "id")),
                    f"gpus: {g['id']!r} replaces kvlint's catalog entry for {shipped.name} ({was} in the "
                    f"catalog, {gib(memory)} here): every workload on this card is checked with the "
                    "configuration's figures",
                )
            )
        entries.append(
            {
                "id": g["id"],
                "name": g["name"] or g["id"],
                "vendor": "nvidia",
                "engine_bytes": memory,
                "engine_bytes_source": f"declared in {origin}",
                "compute_capability": g["compute_capability"],
                "bf16": g["bf16"],
                "fp8": g["fp8"],
                "aliases": g["aliases"],
                "labels": g["labels"],
            }
        )
    for i, m in enumerate(cfg["models"]):
        for name in (m["id"], *m["aliases"]):
            shipped_model = models.lookup(name)
            if shipped_model is not None:
                s.overrides.append(
                    Override(
                        locate(("models", i, "id")),
                        f"models: {name!r} replaces kvlint's catalog entry {shipped_model['id']} "
                        f"({shipped_model.get('source') or 'shipped catalog'}): every workload serving "
                        "it is checked with the configuration's config",
                    )
                )
    s.extra_gpus = entries
    s.extra_models = [
        {"id": m["id"], "aliases": m["aliases"], "source": m["source"], "config": m["config"]}
        for m in cfg["models"]
    ]
    s.register_catalog()
