"""Remember configurations kvlint has already validated, so a pre-commit run skips pydantic.

Validating `.kvlint.yaml` / `[tool.kvlint]` with pydantic costs ~200 ms, mostly importing it —
longer than linting a file. The file rarely changes between commits, so kvlint remembers that an
exact input passed validation. The cache lives in $KVLINT_CACHE_DIR, else $XDG_CACHE_HOME/kvlint,
else ~/.cache/kvlint; KVLINT_NO_CACHE=1 turns it off. A cache that cannot be read or written is
simply not used.

The cache is untrusted (security review F23: a shared runner home, a restored CI cache or a
shared KVLINT_CACHE_DIR can hold a crafted entry), so nothing in it is believed on its own:

- An entry is named by the SHA-256 of kvlint's version, the schema and the input itself; no
  entry written for another input, version or schema is ever looked up.
- The settings are never read from the entry. They are derived again from the input with the
  schema pydantic itself publishes (config_schema.json, tests/test_config.py keeps it equal to
  the model): types, choices and ranges checked, defaults filled. The entry is used only when it
  holds exactly those values — what pydantic made of the same input — else pydantic validates.
- The entry is read only if it is a regular file within a size cap, and written through a new
  temporary file (O_EXCL | O_NOFOLLOW: never through a planted link), then renamed into place.
"""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from typing import Any

try:  # CPython's own SHA-256 (3.12 on)
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found]
except ImportError:
    try:  # (3.10, 3.11)
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:  # a build without them: hashlib's, the same digest
        from hashlib import sha256 as _sha256  # type: ignore[assignment]

# Not hashlib first: it loads OpenSSL's libcrypto, ~3.5 ms and ~4 MiB of a configured one-file run
# (benchmarks/speed.py, row "kvlint FILE (.kvlint.yaml beside)"), for one digest of a few kilobytes.

MAX_ENTRY_BYTES = 1024 * 1024
_SCHEMA = os.path.join(os.path.dirname(__file__), "config_schema.json")


def _directory() -> str | None:
    if os.environ.get("KVLINT_NO_CACHE"):
        return None
    explicit = os.environ.get("KVLINT_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kvlint")


@lru_cache(maxsize=1)
def _schema_bytes() -> bytes:
    with open(_SCHEMA, "rb") as fh:  # shipped with kvlint, not input
        return fh.read()


def _schema() -> dict[str, Any]:
    return json.loads(_schema_bytes())


def _key(canonical: Any) -> str:
    """SHA-256 of what validation depends on: kvlint's version, the schema and the exact input."""
    from kvlint import __version__

    digest = _sha256()
    for part in (__version__.encode(), _schema_bytes(), json.dumps(canonical, sort_keys=True).encode()):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def _entry(canonical: Any) -> str | None:
    directory = _directory()
    return None if directory is None else os.path.join(directory, f"config-{_key(canonical)}.json")


def lookup(data: dict) -> tuple[dict[str, Any], list[str]] | None:
    """(values, stated) for an input validated before; None means: validate it now."""
    try:
        canonical = _as_json(data)
        entry = _entry(canonical)
        if entry is None:
            return None
        derived = derive(canonical, _schema())
        if derived is None:
            return None
        from kvlint.fileio import read_regular

        saved = json.loads(read_regular(entry, MAX_ENTRY_BYTES))
        if not isinstance(saved, dict) or saved.get("input") != canonical:
            return None
        if saved.get("values") != _as_json(derived[0]) or saved.get("stated") != derived[1]:
            return None  # not what validating this input gives: a crafted or stale entry
        return derived
    except (OSError, ValueError, TypeError, ArithmeticError, RecursionError):
        return None


def store(data: dict, values: dict[str, Any], stated: list[str]) -> None:
    try:
        canonical = _as_json(data)
        entry = _entry(canonical)
        if entry is None:
            return
        record = {"input": canonical, "values": _as_json(values), "stated": sorted(stated)}
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        temporary = f"{entry}.{os.getpid()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(temporary, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.replace(temporary, entry)  # atomic: parallel hooks never read half a file
    except (OSError, TypeError, ValueError, RecursionError):
        pass


def _as_json(data: Any) -> Any:
    """The input as JSON gives it back (tuples -> lists, dates -> text), so equality is exact."""
    return json.loads(json.dumps(data, default=str, sort_keys=True))


# ---- the schema, applied without pydantic -------------------------------------------------------


def derive(data: Any, schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]] | None:
    """(values as pydantic's model_dump gives them, names of the settings stated) when `data`
    strictly fits the model's published JSON schema; None when it does not (or when pydantic
    might read it differently, e.g. text where a number belongs): pydantic then decides."""
    ok, values = _object(data, schema, schema)
    if not ok:
        return None
    stated = sorted(_field(k) for k in data)
    return values, stated


def _field(alias: str) -> str:
    return alias.replace("-", "_")


def _object(data: Any, schema: dict[str, Any], root: dict[str, Any]) -> tuple[bool, Any]:
    """A model: every key known (by alias or field name, not both), required ones present,
    defaults filled; the values keyed by field name."""
    if not isinstance(data, dict):
        return False, None
    props: dict[str, Any] = schema.get("properties", {})
    by_name = {**{_field(a): a for a in props}, **{a: a for a in props}}
    seen: dict[str, Any] = {}
    for key, value in data.items():
        alias = by_name.get(key) if isinstance(key, str) else None
        if alias is None or alias in seen:
            return False, None
        seen[alias] = value
    out: dict[str, Any] = {}
    for alias, sub in props.items():
        if alias in seen:
            ok, out[_field(alias)] = _value(seen[alias], sub, root)
            if not ok:
                return False, None
        elif alias in schema.get("required", ()):
            return False, None
        else:
            out[_field(alias)] = json.loads(json.dumps(sub.get("default")))
    return True, out


def _value(data: Any, schema: dict[str, Any], root: dict[str, Any]) -> tuple[bool, Any]:
    if "$ref" in schema:
        return _object(data, root["$defs"][schema["$ref"].rsplit("/", 1)[-1]], root)
    if "anyOf" in schema:
        for option in schema["anyOf"]:
            ok, value = _value(data, option, root)
            if ok:
                return True, value
        return False, None
    kind = schema.get("type")
    if kind == "object" and "properties" in schema:
        return _object(data, schema, root)
    if kind == "object":
        return _mapping(data, schema, root)
    if kind == "array":
        if not isinstance(data, list):
            return False, None
        items = [_value(v, schema.get("items", {}), root) for v in data]
        return all(ok for ok, _ in items), [v for _, v in items]
    return _scalar(data, schema)


def _mapping(data: Any, schema: dict[str, Any], root: dict[str, Any]) -> tuple[bool, Any]:
    extra = schema.get("additionalProperties", True)
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        return False, None
    if extra is True:
        return True, data
    pairs = {k: _value(v, extra, root) for k, v in data.items()}
    return all(ok for ok, _ in pairs.values()), {k: v for k, (_, v) in pairs.items()}


def _scalar(data: Any, schema: dict[str, Any]) -> tuple[bool, Any]:
    kind = schema.get("type")
    if kind == "null":
        return data is None, None
    if kind == "boolean":
        return isinstance(data, bool), data
    if kind == "string":
        return isinstance(data, str) and data in schema.get("enum", (data,)), data
    if kind == "integer" and (not isinstance(data, int) or isinstance(data, bool)):
        return False, None
    if kind == "number":
        if not isinstance(data, (int, float)) or isinstance(data, bool) or not math.isfinite(data):
            return False, None
        data = float(data)
    elif kind != "integer":
        return False, None  # a construct this reader does not know: pydantic decides
    return _in_range(data, schema), data


def _in_range(x: float, schema: dict[str, Any]) -> bool:
    return (
        x >= schema.get("minimum", x)
        and x <= schema.get("maximum", x)
        and ("exclusiveMinimum" not in schema or x > schema["exclusiveMinimum"])
        and ("exclusiveMaximum" not in schema or x < schema["exclusiveMaximum"])
    )
