"""Sizes and counts: parse "80GB", "74.5 GiB", "80Gi", "32k"; format bytes as GiB.

Everything inside kvlint is an exact integer number of bytes or tokens. GB is 10**9 bytes and
GiB is 2**30 bytes; Kubernetes quantities follow the same split (`G` = 10**9, `Gi` = 2**30).
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from kvlint.lazy_re import lazy
from kvlint.record import record

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
GB = 10**9

# suffix -> (multiplier, system). Upper/lower case of the SI letters follows common usage:
# "GB", "gb", "Gb" all mean 10**9 here (nobody sizes GPU memory in bits); Kubernetes' own
# quantity suffixes are case-sensitive ("k" is kilo, "m" is milli), so plain one-letter
# suffixes are read as Kubernetes reads them.
_SIZE_SUFFIXES: dict[str, tuple[int, str]] = {
    "": (1, "none"),
    "b": (1, "none"),
    "k": (10**3, "decimal"),
    "kb": (10**3, "decimal"),
    "mb": (10**6, "decimal"),
    "gb": (10**9, "decimal"),
    "tb": (10**12, "decimal"),
    "pb": (10**15, "decimal"),
    "ki": (KIB, "binary"),
    "kib": (KIB, "binary"),
    "mi": (MIB, "binary"),
    "mib": (MIB, "binary"),
    "gi": (GIB, "binary"),
    "gib": (GIB, "binary"),
    "ti": (1 << 40, "binary"),
    "tib": (1 << 40, "binary"),
    "pi": (1 << 50, "binary"),
    "pib": (1 << 50, "binary"),
}
# One-letter Kubernetes suffixes that are case-sensitive: "M" mega, "G" giga, "T" tera, "P" peta.
_K8S_LETTERS = {"M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}

# The number only: no whitespace quantifier competes with another (`1<30,000 spaces>!` took 15 s
# when spaces were matched by the pattern); the text is stripped first and the unit read after.
_NUMBER_RE = lazy(r"[0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _split_size(text: str) -> tuple[str, str] | None:
    """(number, unit) of a stripped size text, in linear time; None when it is not one."""
    m = _NUMBER_RE().match(text)
    if m is None:
        return None
    unit = text[m.end() :].lstrip()
    if unit and not (unit.isascii() and unit.isalpha()):
        return None
    return m.group(0), unit


@record(frozen=True)
class Size:
    """A parsed size: exact bytes, the unit system it was written in, and the text as written."""

    bytes: int
    system: str  # "decimal" | "binary" | "none"
    unit: str  # the suffix as written ("GB", "Gi", "")
    text: str
    number: Decimal

    @property
    def multiplier(self) -> int:
        return parse_size(f"1{self.unit}").bytes if self.unit else 1


def parse_size(value: object) -> Size:
    """Parse a size; plain integers are bytes. Raises ValueError with the accepted forms."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as 80GB, 74.5GiB or 80Gi, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative (got {value})")
        return Size(value, "none", "", str(value), Decimal(value))
    if isinstance(value, float):
        if value != value or value == float("inf"):
            raise ValueError(f"expected a size such as 80GB, 74.5GiB or 80Gi, got {value!r}")
        if value < 0:
            raise ValueError(f"a size cannot be negative (got {value})")
        return Size(int(value), "none", "", repr(value), Decimal(repr(value)))
    text = str(value)
    parts = _split_size(text.strip())
    if parts is None:
        raise ValueError(
            f"cannot read {text!r} as a size: use a number with a unit such as 80GB, 74.5 GiB, 80Gi, "
            "512MiB or 128KiB (a plain integer is bytes)"
        )
    num_text, suffix = parts[0].replace("_", ""), parts[1]
    try:
        number = Decimal(num_text)
    except InvalidOperation:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"cannot read {text!r} as a size") from None
    if suffix in _K8S_LETTERS:
        mult, system = _K8S_LETTERS[suffix], "decimal"
    elif suffix.lower() in _SIZE_SUFFIXES and suffix not in ("m",):
        mult, system = _SIZE_SUFFIXES[suffix.lower()]
    else:
        raise ValueError(
            f"unknown size unit {suffix!r} in {text!r}: use B, KB, MB, GB, TB (powers of 1000) or "
            "KiB, MiB, GiB, TiB / Ki, Mi, Gi, Ti (powers of 1024)"
        )
    try:  # "1e999999999GB": Decimal refuses an exponent beyond its context (decimal.Overflow)
        if number and number.adjusted() > 40:  # past any byte count; int() of 1e99999 takes seconds
            raise ArithmeticError
        exact = (number * mult).to_integral_value(rounding=ROUND_HALF_EVEN)
    except ArithmeticError:
        raise ValueError(f"size {text.strip()[:40]!r} is too large") from None
    return Size(int(exact), system, suffix, text.strip(), number)


_TOKENS_RE = lazy(r"^\s*(\d+(?:\.\d+)?)([kKmMgGtT])\s*$")
_DECIMAL_MULT = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY_MULT = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@record(frozen=True)
class Count:
    value: int
    suffix: str  # "" when written as a plain number


def parse_count(value: object) -> Count:
    """Parse an integer the way vLLM's `human_readable_int` does.

    Source: vllm/engine/arg_utils.py `human_readable_int`: lowercase k/m/g/t are powers of 1000
    ("32k" = 32,000, "25.6k" = 25,600), uppercase K/M/G/T powers of 1024 ("32K" = 32,768), and
    decimals are refused with binary suffixes.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {value!r}")
    if isinstance(value, int):
        return Count(value, "")
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")) or value != int(value):
            raise ValueError(f"expected a whole number, got {value!r}")
        return Count(int(value), "")
    text = str(value).strip()
    m = _TOKENS_RE().match(text)
    if m:
        number, suffix = m.groups()
        if suffix in _DECIMAL_MULT:
            return Count(int(Decimal(number) * _DECIMAL_MULT[suffix]), suffix)
        if "." in number:
            raise ValueError(f"decimals are not allowed with binary suffixes like {suffix} ({text!r})")
        return Count(int(number) * _BINARY_MULT[suffix], suffix)
    try:
        return Count(int(text.replace("_", "")), "")
    except ValueError:
        raise ValueError(f"expected a whole number such as 8192, 32k or 32K, got {text[:40]!r}") from None


def gib(n: int | float) -> str:
    """Bytes as binary gibibytes with two decimals: 16060522496 -> '14.96 GiB'."""
    return f"{n / GIB:,.2f} GiB"


def human_bytes(n: int) -> str:
    """Bytes in the largest binary unit that keeps the number >= 1 (KiB, MiB or GiB)."""
    if abs(n) >= GIB:
        return gib(n)
    if abs(n) >= MIB:
        v = n / MIB
        return f"{v:,.0f} MiB" if v == int(v) else f"{v:,.2f} MiB"
    if abs(n) >= KIB:
        v = n / KIB
        return f"{v:,.0f} KiB" if v == int(v) else f"{v:,.2f} KiB"
    return f"{n:,} B"


def tokens(n: int) -> str:
    """A token count with thousands separators: 131072 -> '131,072' (never a 4,300-digit conversion)."""
    if isinstance(n, int) and abs(n) >= 10**30:
        return f"a number of about {int(n.bit_length() * 0.30103) + 1:,} digits"
    return f"{n:,}"
