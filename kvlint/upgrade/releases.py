"""The releases `kvlint upgrade` walks: those an engine's release table (kvlint/engines/<engine>/data/
releases.json, kvlint/engines/facts.py) names, from the one a workload runs to the newest read.

A table row's `since` is a release at which one of the engine's modelled defaults or accounting rules
changes, so these are the releases at which kvlint's verdict can change; `newest_read` closes the walk.
Releases are ordered as the engine reads a version (`Engine.release`: TGI's `3.0` is its newest 3.0 patch).
"""

from __future__ import annotations

from kvlint import engines
from kvlint.engines import facts
from kvlint.record import record


@record(frozen=True)
class Start:
    """The release a workload is evaluated under first, and how kvlint came to it."""

    release: str
    how: str  # "the image pins it", "--engine-version", "kvlint's default: ..."
    assumed: bool = False  # no release stated: kvlint's default assumption (the newest it has read)


def has_table(engine: str) -> bool:
    """The engine package keeps a release table."""
    return any(p.stem == "releases" for p in facts.data_files(engine)) if engines.known(engine) else False


def newest(engine: str) -> str | None:
    """The newest release kvlint has read for the engine (its table's `newest_read`), None without a table."""
    return str(facts.load(engine, "releases")["newest_read"]) if has_table(engine) else None


def order(engine: str, text: str) -> tuple[int, ...] | None:
    """A release as the engine compares it; None when it reads none."""
    return engines.get(engine).release(text)


def known(engine: str) -> tuple[str, ...]:
    """Every release the table names (each row's `since`, and the newest read), oldest first, once each."""
    if not has_table(engine):
        return ()
    texts = [str(r["since"]) for r in facts.load(engine, "releases")["rows"]]
    texts.append(str(newest(engine)))
    seen: dict[tuple[int, ...], str] = {}
    for text in texts:
        key = order(engine, text)
        if key is not None and key not in seen:
            seen[key] = text
    return tuple(seen[k] for k in sorted(seen))


def later(engine: str, start: str, to: str | None) -> tuple[str, ...]:
    """The releases after `start`, up to `to` (None: the newest read)."""
    first = order(engine, start)
    last = order(engine, to) if to is not None else None
    out = []
    for text in known(engine):
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
        return Start(stated, how or "as stated")
    if flag:
        return Start(flag, "--engine-version")
    name = engines.display(engine)
    top = newest(engine)
    if top is None:
        return Start("", f"no release stated; kvlint has read no {name} release table", assumed=True)
    return Start(top, f"no release stated: kvlint assumes {name} {top}, the newest it has read", assumed=True)


__all__ = ["Start", "has_table", "known", "later", "newest", "order", "start"]
