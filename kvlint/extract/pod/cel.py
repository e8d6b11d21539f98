"""The part of CEL that DRA device selectors use on GPUs, evaluated against one catalogued device.

A selector (`device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3" &&
device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0`) is split at top-level
`||` and `&&` (and a leading `!`), each term read by one of a few patterns: equality and the string
functions (matches, startsWith, endsWith, contains) on an attribute, quantity comparisons on memory
(compareTo, isGreaterThan, isLessThan, and plain comparison with a byte count), `device.driver`.
A term kvlint cannot read is *unknown*: it admits every device (three-valued logic), and is named
so the report can say what was not checked. Nothing here executes the expression.

Linear in the expression: each level of splitting scans the text once, nesting is capped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kvlint.units import parse_size

try:  # RE2 (the syntax CEL's matches() uses): linear time in the pattern and the text, never backtracks
    import re2 as _re2
except ImportError:  # pragma: no cover - a platform without its wheel: matches() terms stay unread
    _re2 = None

MAX_CHARS = 4000
MAX_DEPTH = 12

Device = dict[
    str, Any
]  # driver, productName, architecture (a set of names), memory (bytes), profile, type, ...
Tri = bool | None  # None: not known (the term was not read, or the device lacks the fact)

_REF = r"device\.(?:attributes|capacity)\[\s*(?:\"[^\"]*\"|'[^']*')\s*\]\.(\w+)|device\.(driver)"
_LIT = r"(?:\"([^\"]*)\"|'([^']*)')"
_QTY = r"quantity\(\s*" + _LIT + r"\s*\)"
_EQ = re.compile(rf"^(?:{_REF})\s*(==|!=)\s*{_LIT}$")
_EQ_REV = re.compile(rf"^{_LIT}\s*(==|!=)\s*(?:{_REF})$")
_FUNC = re.compile(rf"^(?:{_REF})\.(matches|startsWith|endsWith|contains)\(\s*{_LIT}\s*\)$")
_CMP_TO = re.compile(rf"^(?:{_REF})\.compareTo\(\s*{_QTY}\s*\)\s*(>=|<=|==|!=|>|<)\s*(-?\d+)$")
_IS = re.compile(rf"^(?:{_REF})\.(isGreaterThan|isLessThan)\(\s*{_QTY}\s*\)$")
_QTY_CMP = re.compile(rf"^(?:{_REF})\s*(>=|<=|==|!=|>|<)\s*(?:{_QTY}|(\d+))$")

_RE2_MAX_MEM = 1 << 20  # bytes RE2 may use for one compiled pattern: a larger automaton is refused

_OPS: dict[str, Callable[[int, int], bool]] = {
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


class Selector:
    """A parsed selector: `admits(device)` is True, False or None (unknown)."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.unread: list[str] = []  # terms kvlint could not read (they admit every device)
        text = expression if len(expression) <= MAX_CHARS else ""
        if not text:
            self.unread.append(expression[:60] + "…")
        self._eval = self._parse(" ".join(text.split()), 0) if text else (lambda _d: None)

    def admits(self, device: Device) -> Tri:
        return self._eval(device)

    def _parse(self, text: str, depth: int) -> Callable[[Device], Tri]:
        text = _unwrap(text.strip())
        if depth > MAX_DEPTH:
            self.unread.append(text[:60])
            return lambda _d: None
        for op, combine in (("||", _any), ("&&", _all)):
            parts = _split(text, op)
            if len(parts) > 1:
                funcs = [self._parse(p, depth + 1) for p in parts]
                return lambda d, fs=funcs, c=combine: c(f(d) for f in fs)  # type: ignore[misc]
        if text.startswith("!") and not text.startswith("!="):
            inner = self._parse(text[1:], depth + 1)
            return lambda d: None if (v := inner(d)) is None else not v
        term = _term(text)
        if term is None:
            self.unread.append(text[:80])
            return lambda _d: None
        return term


def _unwrap(text: str) -> str:
    """(a && b) -> a && b, when the outer parentheses enclose everything."""
    while text.startswith("(") and text.endswith(")") and _closing(text) == len(text) - 1:
        text = text[1:-1].strip()
    return text


def _step(ch: str, depth: int, quote: str) -> tuple[int, str]:
    """Bracket depth and open quote after `ch` (brackets inside a string do not count)."""
    if quote:
        return depth, "" if ch == quote else quote
    if ch in "\"'":
        return depth, ch
    if ch in "([":
        return depth + 1, quote
    if ch in ")]":
        return depth - 1, quote
    return depth, quote


def _closing(text: str) -> int:
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        closes = not quote and ch in ")]"
        depth, quote = _step(ch, depth, quote)
        if closes and depth == 0:
            return i
    return -1


def _split(text: str, op: str) -> list[str]:
    """Split at `op` outside parentheses, brackets and strings."""
    parts: list[str] = []
    depth, quote, start, i = 0, "", 0, 0
    while i < len(text):
        ch = text[i]
        if not quote and depth == 0 and ch not in "\"'()[]" and text.startswith(op, i):
            parts.append(text[start:i])
            start = i + len(op)
            i += len(op)
            continue
        depth, quote = _step(ch, depth, quote)
        i += 1
    parts.append(text[start:])
    return parts


def _all(values) -> Tri:
    seen = list(values)
    if any(v is False for v in seen):
        return False
    return None if any(v is None for v in seen) else True


def _any(values) -> Tri:
    seen = list(values)
    if any(v is True for v in seen):
        return True
    return None if any(v is None for v in seen) else False


def _bytes(text: str) -> int | None:
    try:
        return parse_size(text).bytes
    except ValueError:
        return None


def _term(text: str) -> Callable[[Device], Tri] | None:
    m = _EQ.match(text)
    if m:
        name, op, lit = m.group(1) or m.group(2), m.group(3), _lit(m.group(4), m.group(5))
        return _equals(name, lit, op == "!=")
    m = _EQ_REV.match(text)
    if m:
        lit, op, name = _lit(m.group(1), m.group(2)), m.group(3), m.group(4) or m.group(5)
        return _equals(name, lit, op == "!=")
    m = _FUNC.match(text)
    if m:
        return _string_func(m.group(1) or m.group(2), m.group(3), _lit(m.group(4), m.group(5)))
    m = _CMP_TO.match(text)
    if m:
        q = _bytes(_lit(m.group(3), m.group(4)))
        op, rhs = m.group(5), int(m.group(6))
        if q is None:
            return None
        name = m.group(1) or m.group(2)
        return lambda d: (
            None if not isinstance(d.get(name), int) else _OPS[op]((d[name] > q) - (d[name] < q), rhs)
        )
    m = _IS.match(text)
    if m:
        limit = _bytes(_lit(m.group(4), m.group(5)))
        if limit is None:
            return None
        name, op = m.group(1) or m.group(2), (">" if m.group(3) == "isGreaterThan" else "<")
        return lambda d: None if not isinstance(d.get(name), int) else _OPS[op](d[name], limit)
    m = _QTY_CMP.match(text)
    if m:
        raw = m.group(6) if m.group(6) is not None else _lit(m.group(4), m.group(5))
        q = _bytes(raw)
        if q is None:
            return None
        name, op = m.group(1) or m.group(2), m.group(3)
        return lambda d: None if not isinstance(d.get(name), int) else _OPS[op](d[name], q)
    return None


def _lit(a: str | None, b: str | None) -> str:
    return a if a is not None else (b or "")


def _equals(name: str, lit: str, negate: bool) -> Callable[[Device], Tri]:
    def check(d: Device) -> Tri:
        have = d.get(name)
        if have is None:
            return None
        hit = lit in have if isinstance(have, (set, frozenset)) else have == lit
        return hit != negate

    return check


def linear_pattern(lit: str) -> Any | None:
    """`lit` compiled by RE2, which runs in time linear in the text (no backtracking), or None when
    it does not compile, needs more than _RE2_MAX_MEM, or RE2 is not installed. Python's `re`
    never sees the pattern: `.*.*.*…Z` is polynomial there, `(a+)+` exponential."""
    if _re2 is None:
        return None
    options = _re2.Options()
    options.log_errors = False
    options.max_mem = _RE2_MAX_MEM
    try:
        return _re2.compile(lit, options)
    except (_re2.error, TypeError, ValueError):
        return None


def _string_func(name: str, func: str, lit: str) -> Callable[[Device], Tri] | None:
    if len(lit) > 200:
        return None
    search = None
    if func == "matches":
        pattern = linear_pattern(lit)
        if pattern is None:
            return None  # not evaluated: the term is named as unread
        search = pattern.search

    def one(value: str) -> bool:
        if search is not None:
            return search(value) is not None
        if func == "startsWith":
            return value.startswith(lit)
        if func == "endsWith":
            return value.endswith(lit)
        return lit in value

    def check(d: Device) -> Tri:
        have = d.get(name)
        if have is None or isinstance(have, int):
            return None
        values = have if isinstance(have, (set, frozenset)) else {have}
        return any(one(v) for v in values)

    return check
