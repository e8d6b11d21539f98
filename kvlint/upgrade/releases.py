"""The releases `kvlint upgrade` walks: those kvlint has read for an engine, from its release table
(kvlint/engines/<engine>/data/releases.json, kvlint/engines/facts.py), from the one a workload runs to the
newest read.

A table names them three ways: each row's `since` (a release at which a modelled default or rule
changes), `newest_read`, and the releases it was read at: vLLM's `read` ("0.5.0-0.5.3, …, every X.Y.0 from
0.8.0 to 0.33.0, …"), SGLang's `read_at` rows ("v0.5.20, v0.5.21"). The engines' code also compares
releases the table has no row for (vLLM's sampler warm-up from 0.11.1): walking every release read puts
such a change at the first release read that has it. Releases are ordered as the engine reads a version
(`Engine.release`: TGI's `3.0` is its newest 3.0 patch).
"""

from __future__ import annotations

import re

from kvlint import engines
from kvlint.engines import facts
from kvlint.record import record


@record(frozen=True)
class Start:
    """The release a workload is evaluated under first, and how kvlint came to it."""

    release: str
    how: str  # "the image pins it", "--engine-version", "kvlint's default: ..."
    assumed: bool = False  # no release stated: kvlint's default assumption (the newest it has read)


MAIN = "releases"  # the table an engine's release, when it names none, is read against


def tables(engine: str) -> tuple[str, ...]:
    """The engine's release tables (data files whose `table` is "releases"), the main one first: one per
    release line (llama.cpp's builds in releases.json, Ollama's releases in ollama_releases.json)."""
    if not engines.known(engine):
        return ()
    names = [
        p.stem for p in facts.data_files(engine) if facts.load(engine, p.stem).get("table") == "releases"
    ]
    return tuple(sorted(names, key=lambda n: n != MAIN))


def has_table(engine: str) -> bool:
    """The engine package keeps a release table."""
    return bool(tables(engine))


def table_for(engine: str, release: str | None) -> str:
    """The table of the release line `release` is on: the one whose newest release the engine reads with
    as many parts (a llama.cpp build `b6325` or an Ollama `0.12.6`); else the main one."""
    mine = order(engine, release) if release else None
    for name in tables(engine):
        top = order(engine, str(facts.load(engine, name)["newest_read"]))
        if mine is not None and top is not None and len(top) == len(mine):
            return name
    return MAIN


def newest(engine: str, table: str = MAIN) -> str | None:
    """The newest release kvlint has read for the engine (its table's `newest_read`), None without a table."""
    return str(facts.load(engine, table)["newest_read"]) if table in tables(engine) else None


def order(engine: str, text: str) -> tuple[int, ...] | None:
    """A release as the engine compares it; None when it reads none."""
    return engines.get(engine).release(text)


_RELEASE = r"\d+(?:\.\d+)+(?:\.post\d+)?"
_EVERY = re.compile(rf"every X\.Y\.0 from ({_RELEASE}) to ({_RELEASE})(?: \([^)]*\))?")
_ITEM = re.compile(rf"({_RELEASE})(?:-({_RELEASE}))?")


def _span(first: str, last: str) -> list[str]:
    """ "0.5.0-0.5.3" -> 0.5.0 … 0.5.3; "0.8.2-0.8.5.post1" -> 0.8.2 … 0.8.5, 0.8.5.post1."""
    a, b = first.split("."), last.split(".post")[0].split(".")
    if a[:-1] != b[:-1] or not a[-1].isdigit() or not b[-1].isdigit():
        return [first, last]
    out = [".".join([*a[:-1], str(n)]) for n in range(int(a[-1]), int(b[-1]) + 1)]
    return out + ([last] if ".post" in last else [])


def read_list(text: str) -> list[str]:
    """The releases a table's `read` text lists."""
    out: list[str] = []
    for m in _EVERY.finditer(text):
        a, b = m.group(1).split("."), m.group(2).split(".")
        out += [f"{a[0]}.{minor}.0" for minor in range(int(a[1]), int(b[1]) + 1)] if a[0] == b[0] else []
    for m in _ITEM.finditer(_EVERY.sub("", text)):
        out += _span(m.group(1), m.group(2)) if m.group(2) else [m.group(1)]
    return out


def _named(engine: str, table: str) -> list[str]:
    """Every release the table names: rows' `since`, the releases read, the newest read."""
    doc = facts.load(engine, table)
    texts = [str(r["since"]) for r in doc["rows"]]
    texts += read_list(str(doc.get("read", "")))
    texts += [
        t.lstrip("v") for r in doc["rows"] if r["key"] == "read_at" for t in str(r["value"]).split(", ")
    ]
    return [*texts, str(doc["newest_read"])]


def known(engine: str, table: str = MAIN) -> tuple[str, ...]:
    """Every release the table names, oldest first, once each (as the engine orders them)."""
    if table not in tables(engine):
        return ()
    texts = _named(engine, table)
    seen: dict[tuple[int, ...], str] = {}
    for text in texts:
        key = order(engine, text)
        if key is not None and key not in seen:
            seen[key] = text
    return tuple(seen[k] for k in sorted(seen))


def later(engine: str, start: str, to: str | None) -> tuple[str, ...]:
    """The releases of `start`'s line after it, up to `to` (None: the newest read)."""
    first = order(engine, start)
    last = order(engine, to) if to is not None else None
    out = []
    for text in known(engine, table_for(engine, start)):
        key = order(engine, text)
        if key is None or first is not None and key <= first:
            continue
        if last is not None and key > last:
            break
        out.append(text)
    return tuple(out)


def start(engine: str, stated: str | None, how: str, flag: str | None) -> Start:
    """Where the walk begins: the release the workload states (its image), else --engine-version, else
    kvlint's default assumption, named."""
    if stated is not None:
        return Start(stated, how or "stated in the file")
    if flag:
        return Start(flag, "--engine-version")
    name = engines.display(engine)
    top = newest(engine)
    if top is None:
        return Start("", f"no release stated; kvlint has read no {name} release table", assumed=True)
    return Start(top, f"no release stated: kvlint assumes {name} {top}, the newest it has read", assumed=True)


__all__ = [
    "MAIN",
    "Start",
    "has_table",
    "known",
    "later",
    "newest",
    "order",
    "read_list",
    "start",
    "table_for",
    "tables",
]
