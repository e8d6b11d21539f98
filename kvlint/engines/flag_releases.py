"""release -> the flags it has, made from an engine flag table's runs of releases (kvlint/engines/flag_sets.py)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping


class ReleaseSets(Mapping[str, frozenset[str]]):
    """release -> the flags it has, from the flags' runs of releases. A release's set is made the first
    time it is asked for: a run asks for the one or two releases in force, and making the sets of all of
    vLLM's 66 releases up front made 13,741 set insertions in every run that met a vLLM flag."""

    def __init__(self, order: tuple[str, ...], spans: dict[str, tuple[str, ...]]) -> None:
        self._at = {r: i for i, r in enumerate(order)}
        self._runs: list[tuple[str, int, int]] = []  # (flag, first release's index, last release's index)
        for flag, runs in spans.items():
            for run in runs:
                a, _, b = run.partition("..")
                self._runs.append((flag, self._at[a], self._at[b or a]))
        self._made: dict[str, frozenset[str]] = {}

    def __getitem__(self, release: str) -> frozenset[str]:
        made = self._made.get(release)
        if made is None:
            made = self._made[release] = self.union((release,))
        return made

    def union(self, releases: tuple[str, ...]) -> frozenset[str]:
        """The flags any of `releases` has (KeyError for a release not read), without making each set."""
        at = sorted({self._at[r] for r in releases})
        out = set()
        for flag, lo, hi in self._runs:
            k = bisect_left(at, lo)  # the first release asked at or after the run's start
            if k < len(at) and at[k] <= hi:
                out.add(flag)
        return frozenset(out)

    @property
    def made(self) -> tuple[str, ...]:
        """The releases whose set has been made so far."""
        return tuple(self._made)

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)
