"""Engine facts kept as data: each engine package's `data/*.json`, one row per fact with its `source`.

A file holds one table: `{"engine", "table", "about", "rows": [...]}`. A release table (`releases`) has
rows `{"since", "key", "value", "source"}`: the value of `key` from release `since` on, until a later row
for the same key; `keys` says what each key means. `source` is where the fact was read (`pkg==X:path:line`
in the released package, or `owner/repo@ref:path`). tests/test_engine_data.py checks every file of every
registered engine against these shapes. Files load on first use and are cached: a run pays only for the
tables its engines read.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import TYPE_CHECKING, Any

from kvlint.lazy_re import lazy
from kvlint.record import record

if TYPE_CHECKING:  # pathlib (and urllib, ipaddress under it) only for the data-file listing
    from pathlib import Path

_ROOT = os.path.dirname(__file__)
_RELEASE = lazy(r"^(\d+(?:\.\d+)*)(?:\.post(\d+))?$")


def data_files(engine: str) -> list[Path]:
    """The data files of engine package `engine` (kvlint/engines/<engine>/data/*.json)."""
    from pathlib import Path

    return sorted(Path(_ROOT, engine, "data").glob("*.json"))


def has_table(engine: str, table: str) -> bool:
    """kvlint/engines/<engine>/data/<table>.json exists (a stat: no listing, no pathlib)."""
    return os.path.isfile(os.path.join(_ROOT, engine, "data", f"{table}.json"))


@cache
def load(engine: str, table: str) -> dict[str, Any]:
    """kvlint/engines/<engine>/data/<table>.json, parsed once."""
    with open(os.path.join(_ROOT, engine, "data", f"{table}.json"), encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def release(text: str, width: int = 0) -> tuple[int, ...]:
    """A release as a data file writes it: '0.20.0' -> (0, 20, 0); '0.4.6.post2' -> (0, 4, 6, 2); `width`
    pads with zeros ('0.5.3', 4 -> (0, 5, 3, 0)). ValueError for anything else."""
    m = _RELEASE().match(text)
    if not m:
        raise ValueError(f"not a release: {text!r}")
    parts = [int(p) for p in m.group(1).split(".")]
    if m.group(2) is not None:
        parts += [0] * (3 - len(parts)) + [int(m.group(2))]
    return tuple(parts + [0] * (width - len(parts)))


@record(frozen=True)
class Change:
    """One row of a release table: `key` is `value` from release `since` on."""

    since: tuple[int, ...]
    key: str
    value: object
    source: str


@cache
def changes(engine: str, table: str = "releases", width: int = 0) -> tuple[Change, ...]:
    """The rows of a release table, in file order."""
    rows = load(engine, table)["rows"]
    return tuple(Change(release(r["since"], width), r["key"], r["value"], r["source"]) for r in rows)


def in_force(rows: tuple[Change, ...], key: str, version: tuple[int, ...] | None) -> Change:
    """The row for `key` in force at `version`: the last whose `since` is at or below it (the first row
    for a version older than every row; the newest row for None)."""
    mine = [c for c in rows if c.key == key]
    if version is None:
        return mine[-1]
    found = mine[0]
    for c in mine:
        if version >= c.since:
            found = c
    return found


__all__ = ["Change", "changes", "data_files", "has_table", "in_force", "load", "release"]
