"""The Terraform functions and operators terraform_eval.py evaluates, each as the language documents it
(developer.hashicorp.com/terraform/language/functions/<name>; operators: /expressions/operators).

A function whose argument is unknown gives an unknown (a collection function still works on a list or
an object some of whose items are unknown: `concat`, `merge`, `lookup`, `length`, `keys`, `element`,
`flatten`, `coalesce`). A function not listed here is unknown: never guessed. A call Terraform
itself refuses (a lookup of a missing key with no default, a type that does not convert) is an
`Error`, which `try` / `can` see. Results are bounded (ITEMS_MAX items, STRING_MAX characters).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

ITEMS_MAX = 2_000
STRING_MAX = 65_536
INT_MAX = 1 << 62  # past it a number is unknown (no int of thousands of digits to convert)


class Unknown:
    """A value kvlint cannot know, with the expression's text (for the placeholder it leaves)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text[:200]

    def __repr__(self) -> str:
        return f"Unknown({self.text!r})"


class Error(Exception):
    """What Terraform would refuse: `try` moves on, `can` says false, anywhere else unknown."""


def is_known(v: Any, depth: int = 0) -> bool:
    """True when no part of the value is unknown."""
    if isinstance(v, Unknown) or depth > 40:
        return False
    if isinstance(v, dict):
        return all(is_known(x, depth + 1) for x in v.values())
    if isinstance(v, list):
        return all(is_known(x, depth + 1) for x in v)
    return True


def as_string(v: Any) -> str | Unknown:
    """A value inside a template or as a key: Terraform's string conversion (numbers, bools)."""
    if isinstance(v, Unknown):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return v
    raise Error("not a string")


def _number(v: Any) -> int | float:
    if isinstance(v, bool):
        raise Error("not a number")
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            raise Error("not a number") from None
        return int(f) if f.is_integer() else f
    raise Error("not a number")


def index(base: Any, key: Any, text: str) -> Any:
    """`base.key` / `base[key]`: a missing key of a known object or an index past a list is an error."""
    if isinstance(base, Unknown) or isinstance(key, Unknown):
        return Unknown(text)
    if isinstance(base, dict):
        k = as_string(key)
        if k in base:
            return base[k]
        raise Error(f"no attribute {k!r}")
    if isinstance(base, list):
        i = _number(key)
        if isinstance(i, int) and 0 <= i < len(base):
            return base[i]
        raise Error("index out of range")
    raise Error("not a collection")


def binary(op: str, a: Any, b: Any, text: str) -> Any:
    if op in ("==", "!="):
        if not (is_known(a) and is_known(b)):
            return Unknown(text)
        return (a == b) == (op == "==")
    if isinstance(a, Unknown) or isinstance(b, Unknown):
        return Unknown(text)
    if op in ("&&", "||"):
        if not isinstance(a, bool) or not isinstance(b, bool):
            raise Error("not a boolean")
        return (a and b) if op == "&&" else (a or b)
    x, y = _number(a), _number(b)
    if op in ("<", ">", "<=", ">="):
        return {"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op]
    if op in ("/", "%") and y == 0:
        raise Error("division by zero")
    got = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y, "%": lambda: x % y}
    value = got[op]()
    return int(value) if isinstance(value, float) and value.is_integer() else value


def unary(op: str, v: Any, text: str) -> Any:
    if isinstance(v, Unknown):
        return Unknown(text)
    if op == "!":
        if not isinstance(v, bool):
            raise Error("not a boolean")
        return not v
    return -_number(v)


# ---- functions: name -> (needs every argument fully known, implementation)


def _concat(*lists: Any) -> list[Any]:
    out: list[Any] = []
    for x in lists:
        if not isinstance(x, list):
            raise Error("concat: not a list")
        out.extend(x)
    return out


def _merge(*maps: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in maps:
        if m is None:
            continue
        if not isinstance(m, dict):
            raise Error("merge: not an object")
        out.update(m)
    return out


def _lookup(m: Any, key: Any, *default: Any) -> Any:
    if not isinstance(m, dict) or len(default) > 1:
        raise Error("lookup: not an object")
    k = as_string(key)
    if k in m:
        return m[k]
    if default:
        return default[0]
    raise Error(f"lookup: no key {k!r}")


def _coalesce(*values: Any) -> Any:
    for v in values:
        if isinstance(v, Unknown):
            return v  # it may be null or not: the answer depends on it
        if v is not None and v != "":
            return v
    raise Error("coalesce: no non-null argument")


def _length(v: Any) -> int:
    if isinstance(v, (list, dict, str)):
        return len(v)
    raise Error("length: not a collection")


def _keys(m: Any) -> list[str]:
    if not isinstance(m, dict):
        raise Error("keys: not an object")
    return sorted(m)


def _values(m: Any) -> list[Any]:
    if not isinstance(m, dict):
        raise Error("values: not an object")
    return [m[k] for k in sorted(m)]


def _flatten(v: Any, depth: int = 0) -> list[Any]:
    if not isinstance(v, list) or depth > 40:
        raise Error("flatten: not a list")
    out: list[Any] = []
    for x in v:
        if isinstance(x, Unknown):
            raise _Unknowable
        out.extend(_flatten(x, depth + 1) if isinstance(x, list) else [x])
    return out


def _element(v: Any, i: Any) -> Any:
    n = _number(i)
    if not isinstance(v, list) or not v or not isinstance(n, int):
        raise Error("element: not a list")
    return v[n % len(v)]


def _toset(v: Any) -> list[Any]:
    if not isinstance(v, list):
        raise Error("toset: not a list")
    return sorted(_distinct(v), key=_order)  # a set of strings iterates in lexical order


def _distinct(v: Any) -> list[Any]:
    if not isinstance(v, list):
        raise Error("distinct: not a list")
    seen: dict[str, Any] = {}
    for x in v:
        seen.setdefault(json.dumps(x, sort_keys=True), x)
    return list(seen.values())


def _order(x: Any) -> tuple[int, str]:
    return (0, x) if isinstance(x, str) else (1, json.dumps(x, sort_keys=True))


def _tolist(v: Any) -> list[Any]:
    if not isinstance(v, list):
        raise Error("tolist: not a list")
    return v


def _tomap(v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise Error("tomap: not an object")
    return v


def _tostring(v: Any) -> Any:
    return None if v is None else as_string(v)


def _tobool(v: Any) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if v in ("true", "false"):
        return v == "true"
    raise Error("tobool: not a boolean")


def _contains(coll: Any, v: Any) -> bool:
    if not isinstance(coll, list):
        raise Error("contains: not a list")
    return v in coll


def _split(sep: Any, s: Any) -> list[str]:
    if not isinstance(sep, str) or not isinstance(s, str) or not sep:
        raise Error("split: not strings")
    return s.split(sep)


def _join(sep: Any, *lists: Any) -> str:
    items = [str(as_string(x)) for ls in lists for x in (ls if isinstance(ls, list) else _bad("join"))]
    glue = str(as_string(sep))
    if sum(map(len, items)) + len(glue) * len(items) > STRING_MAX:
        raise _Unknowable
    return glue.join(items)


def _bad(name: str) -> list[Any]:
    raise Error(f"{name}: wrong argument")


def _format(spec: Any, *args: Any) -> str:
    """`format` with the verbs configurations use: %s %d %v %%, in order (other verbs: not modelled)."""
    if not isinstance(spec, str):
        raise Error("format: not a string")
    values = iter(args)

    def one(m: re.Match[str]) -> str:
        flags, verb = m.groups()
        if verb == "%":
            return "%"
        try:
            v = next(values)
        except StopIteration:
            raise Error("format: too few arguments") from None
        if verb == "d":
            n = _number(v)
            if not isinstance(n, int):
                raise Error("format: %d of a fraction")
            return f"%{flags}d" % n
        return f"%{flags}s" % as_string(v)

    if sum(len(str(a)) for a in args) + len(spec) > STRING_MAX:
        raise _Unknowable
    verbs = r"%(-?0?\d{0,3})([sdv%])"  # a width and zero padding (`%02d`); other verbs: not modelled
    if re.sub(verbs, "", spec).count("%"):
        raise _Unknowable
    return re.sub(verbs, one, spec)


def _range(*args: Any) -> list[int | float]:
    nums = [_number(a) for a in args]
    if not 1 <= len(nums) <= 3:
        raise Error("range: one to three arguments")
    start, stop, step = (
        (0, nums[0], 1) if len(nums) == 1 else (nums[0], nums[1], nums[2] if len(nums) == 3 else 1)
    )
    if step == 0 or abs((stop - start) / step) > ITEMS_MAX:
        raise _Unknowable
    out = []
    x = start
    while (x < stop) if step > 0 else (x > stop):
        out.append(x)
        x += step
    return out


def _replace(s: Any, old: Any, new: Any) -> str:
    if not all(isinstance(x, str) for x in (s, old, new)):
        raise Error("replace: not strings")
    if len(old) > 1 and old.startswith("/") and old.endswith("/"):
        raise _Unknowable  # a regular expression: RE2 syntax, not modelled
    if not old or len(s) + s.count(old) * max(0, len(new) - len(old)) > STRING_MAX:
        raise _Unknowable
    return s.replace(old, new)


def _jsondecode(s: Any) -> Any:
    if not isinstance(s, str):
        raise Error("jsondecode: not a string")
    try:
        return json.loads(s)
    except ValueError:
        raise Error("jsondecode: not JSON") from None


class _Unknowable(Exception):
    """The call is well formed but its answer is not modelled: unknown."""


def _str_fn(f: Callable[[str], Any]) -> Callable[[Any], Any]:
    def g(s: Any) -> Any:
        if not isinstance(s, str):
            raise Error("not a string")
        return f(s)

    return g


def _num_fn(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*xs: Any) -> Any:
        value = f(*(_number(x) for x in xs))
        return int(value) if isinstance(value, float) and value.is_integer() else value

    return g


_FUNCTIONS: dict[str, tuple[bool, Callable[..., Any]]] = {
    "concat": (False, _concat),
    "merge": (False, _merge),
    "lookup": (False, _lookup),
    "coalesce": (False, _coalesce),
    "length": (False, _length),
    "keys": (False, _keys),
    "values": (False, _values),
    "flatten": (False, _flatten),
    "element": (False, _element),
    "tolist": (False, _tolist),
    "tomap": (False, _tomap),
    "toset": (True, _toset),
    "distinct": (True, _distinct),
    "contains": (True, _contains),
    "tostring": (True, _tostring),
    "tonumber": (True, lambda v: None if v is None else _number(v)),
    "tobool": (True, _tobool),
    "lower": (True, _str_fn(str.lower)),
    "upper": (True, _str_fn(str.upper)),
    "trimspace": (True, _str_fn(str.strip)),
    "split": (True, _split),
    "join": (True, _join),
    "format": (True, _format),
    "range": (True, _range),
    "replace": (True, _replace),
    "jsondecode": (True, _jsondecode),
    "min": (True, _num_fn(min)),
    "max": (True, _num_fn(max)),
    "abs": (True, _num_fn(abs)),
    "ceil": (True, _num_fn(math.ceil)),
    "floor": (True, _num_fn(math.floor)),
}


def call(name: str, args: list[Any], text: str) -> Any:
    """A function's value (module docstring): unknown when not modelled or an argument is unknown."""
    entry = _FUNCTIONS.get(name)
    if entry is None:
        return Unknown(text)
    deep, fn = entry
    if any(isinstance(a, Unknown) for a in args) or (deep and not all(is_known(a) for a in args)):
        return Unknown(text)
    try:
        value = fn(*args)
    except _Unknowable:
        return Unknown(text)
    except TypeError:  # the wrong number of arguments: Terraform refuses the call
        raise Error(f"{name}: wrong arguments") from None
    if isinstance(value, (list, dict)) and len(value) > ITEMS_MAX:
        return Unknown(text)
    if isinstance(value, str) and len(value) > STRING_MAX:
        return Unknown(text)
    return value
