"""`lazy(r"...")`: one regular expression, compiled the first time it is used rather than at import.

A module-level `re.compile` is paid on every start, whether the run meets what it matches or not: a
one-file run (`kvlint FILE`, as pre-commit calls it) imported 49 such patterns, about 6 ms of
compiling, and used 16 of them (benchmarks/speed.py). Each name holds one pattern:

    _TAG = lazy(r"^v?(\\d+\\.\\d+)")
    ...
    m = _TAG().match(tag)

The first call compiles it; every later call returns the same compiled object (`m.re is _TAG()`).
tests/test_import_cost.py checks that the modules a one-file run imports compile nothing at import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache


def lazy(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A function returning `re.compile(pattern, flags)`, compiled on its first call."""

    @cache
    def compiled() -> re.Pattern[str]:
        return re.compile(pattern, flags)

    return compiled
