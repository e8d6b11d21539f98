"""Remember configurations kvlint has already validated, so a pre-commit run skips pydantic.

Validating `.kvlint.yaml` / `[tool.kvlint]` with pydantic costs ~200 ms, mostly importing it —
longer than linting a file. The file rarely changes between commits, so the validated values are
kept in one small JSON file per configuration path, next to the exact input they came from and
the kvlint version and schema they were validated with. Any difference means validate again.
The cache lives in $KVLINT_CACHE_DIR, else $XDG_CACHE_HOME/kvlint, else ~/.cache/kvlint;
KVLINT_NO_CACHE=1 turns it off. A cache that cannot be read or written is simply not used.
"""

from __future__ import annotations

import json
import os
from typing import Any


def _directory() -> str | None:
    if os.environ.get("KVLINT_NO_CACHE"):
        return None
    explicit = os.environ.get("KVLINT_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kvlint")


def _stamp() -> str:
    """What validation depends on besides the input: kvlint's version and the schema's source."""
    from kvlint import __version__

    schema = os.path.join(os.path.dirname(__file__), "config.py")
    try:
        return f"{__version__}:{os.stat(schema).st_mtime_ns}"
    except OSError:
        return __version__


def _entry(config_path: str) -> str | None:
    directory = _directory()
    if directory is None:
        return None
    name = "".join(c if c.isalnum() else "_" for c in os.path.abspath(config_path))[-180:]
    return os.path.join(directory, f"config{name}.json")


def lookup(config_path: str, data: dict) -> tuple[dict[str, Any], list[str]] | None:
    entry = _entry(config_path)
    if entry is None:
        return None
    try:
        with open(entry, encoding="utf-8") as fh:
            saved = json.load(fh)
        if saved["stamp"] != _stamp() or saved["input"] != _as_json(data):
            return None
        return saved["values"], saved["stated"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(config_path: str, data: dict, values: dict[str, Any], stated: list[str]) -> None:
    entry = _entry(config_path)
    if entry is None:
        return
    record = {"stamp": _stamp(), "input": _as_json(data), "values": values, "stated": stated}
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        temporary = f"{entry}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as fh:
            json.dump(record, fh, default=str)
        os.replace(temporary, entry)  # atomic: parallel hooks never read half a file
    except (OSError, TypeError, ValueError):
        pass


def _as_json(data: Any) -> Any:
    """The input as JSON gives it back (tuples -> lists, dates -> text), so equality is exact."""
    return json.loads(json.dumps(data, default=str, sort_keys=True))
