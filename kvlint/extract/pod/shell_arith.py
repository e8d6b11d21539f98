"""Shell arithmetic in a container's script: `$((A * B))` with the variables' values, on whole
numbers (llm-d's wide-EP `--data-parallel-size $((LWS_GROUP_SIZE * DP_SIZE_LOCAL))`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from kvlint.lazy_re import lazy

_ARITH = lazy(r"\$\(\(([^()]{0,200})\)\)")
_ARITH_NAME = lazy(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?|\b([A-Za-z_][A-Za-z0-9_]*)\b")
_ARITH_VALUE_MAX = 1 << 40


def _arithmetic(m: re.Match, value_of: Callable[[str], str | None], unresolved: list[str]) -> str:
    """`$((A * B))` in a shell script: the variables' values (named with or without `$`, as the shell
    allows) and + - * / % on whole numbers; anything else stays as written, its names unresolved."""
    missing: list[str] = []

    def value(n: re.Match) -> str:
        name = n.group(1) or n.group(2)
        text = value_of(name)
        if text is None or not text.strip().isdigit():
            missing.append(name)
            return "0"
        return text.strip()

    expr = _ARITH_NAME().sub(value, m.group(1))
    result = None if missing else _integer_expr(expr)
    if result is None:
        unresolved.extend(missing or [m.group(0)])
        return m.group(0)
    return str(result)


def _integer_expr(expr: str) -> int | None:
    """A shell arithmetic expression of digits, + - * / % and parentheses (integer division, as in
    the shell), or None; values are kept below 2^40 (no runaway products)."""
    tokens = re.findall(r"\d+|[-+*/%]", expr)
    if "".join(tokens) != re.sub(r"\s+", "", expr) or not tokens:
        return None
    acc: list[int] = []
    ops: list[str] = []
    sign = 1
    for tok in tokens:
        if tok.isdigit():
            if len(tok) > 15:  # past 2^40 already (and int() refuses 4,300 digits): not evaluated
                return None
            acc.append(sign * int(tok))
            sign = 1
        elif len(acc) == len(ops):  # a unary sign
            if tok not in "+-":
                return None
            sign = -sign if tok == "-" else sign
        else:
            ops.append(tok)
    if len(acc) != len(ops) + 1:
        return None
    terms, adds = [acc[0]], []
    for op, n in zip(ops, acc[1:], strict=True):
        if op in "*/%":
            if op != "*" and n == 0:
                return None
            a = terms[-1]
            terms[-1] = a * n if op == "*" else (int(a / n) if op == "/" else a - n * int(a / n))
        else:
            adds.append(op)
            terms.append(n)
        if abs(terms[-1]) >= _ARITH_VALUE_MAX:
            return None
    total = terms[0]
    for op, n in zip(adds, terms[1:], strict=True):
        total = total + n if op == "+" else total - n
    return total


def substitute_arithmetic(text: str, value_of: Callable[[str], str | None], unresolved: list[str]) -> str:
    """Every `$((...))` of text replaced by its value; one that cannot be computed stays as written and
    its names (or the whole expression) go to unresolved."""
    return _ARITH().sub(lambda m: _arithmetic(m, value_of, unresolved), text)


def join_arithmetic(words: list[str]) -> list[str]:
    """`$((A * B))` split by the lexer into `$((A`, `*`, `B))`: one word again, as the shell reads it."""
    out: list[str] = []
    depth = 0
    for w in words:
        if depth > 0:
            out[-1] += " " + w
        else:
            out.append(w)
        if "$((" in w or depth > 0:
            depth += w.count("(") - w.count(")")
            depth = max(depth, 0)
    return out
