"""The release-table rows that differ between two releases of an engine: for each key of the table
(kvlint/engines/<engine>/data/releases.json), the row in force at each, when they are not the same row."""

from __future__ import annotations

from kvlint.engines import facts
from kvlint.record import record
from kvlint.upgrade.releases import has_table, order, table_for

# keys that record which releases were read, not a default or a rule (SGLang's `read_at`)
BOOKKEEPING = frozenset({"read_at"})


@record(frozen=True)
class RowChange:
    """One key of the release table whose row in force differs between two releases."""

    key: str
    means: str  # the table's `keys` entry: what the key is
    before: object
    after: object
    since: str  # the release the newer row starts at
    source: str  # where the newer row was read
    engine: str = ""

    def after_release(self, release: str) -> bool:
        """The newer row starts after `release`."""
        a, b = order(self.engine, self.since), order(self.engine, release)
        return a is not None and b is not None and a > b


def _in_force(rows: list[dict], key: str, version: tuple[int, ...], engine: str) -> dict:
    """The row for `key` at `version`: the last whose `since` is at or below it (the first row for a
    version older than every row), compared as the engine orders releases."""
    mine = [r for r in rows if r["key"] == key]
    found = mine[0]
    for r in mine:
        since = order(engine, str(r["since"]))
        if since is not None and version >= since:
            found = r
    return found


def changed(engine: str, old: str, new: str) -> tuple[RowChange, ...]:
    """The rows in force at `new` that were not at `old`, by the release they start at (the table's key
    order within one)."""
    a, b = order(engine, old), order(engine, new)
    if not has_table(engine) or a is None or b is None:
        return ()
    doc = facts.load(engine, table_for(engine, new))
    rows, means = doc["rows"], doc.get("keys", {})
    out = []
    for key in dict.fromkeys(r["key"] for r in rows if r["key"] not in BOOKKEEPING):
        before, after = _in_force(rows, key, a, engine), _in_force(rows, key, b, engine)
        if before is not after and before["value"] != after["value"]:
            out.append(
                RowChange(
                    key,
                    str(means.get(key, "")),
                    before["value"],
                    after["value"],
                    after["since"],
                    after["source"],
                    engine,
                )
            )
    return tuple(
        sorted(out, key=lambda r: order(engine, r.since) or ())
    )  # stable: key order within a release


__all__ = ["RowChange", "changed"]
