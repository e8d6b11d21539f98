"""A small read-only YAML tree whose every node knows where it sits in the file.

ruamel.yaml composes the stream into nodes with start and end marks; this module turns them into
`Mapping`, `Sequence` and `Scalar` objects with YAML 1.1 values (as Kubernetes reads them),
merge keys applied, duplicate keys noticed and aliases shared rather than expanded.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from kvlint.findings import Location

TAG_PREFIX = "tag:yaml.org,2002:"


class Node:
    __slots__ = ("line", "col", "end_line", "end_col", "file")

    def __init__(self, line: int, col: int, end_line: int, end_col: int) -> None:
        # 0-based, as ruamel reports them; `where()` gives the 1-based Location.
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        # the file the node was read from, when it is not the file being linted (a KServe runtime in a
        # file beside it): its positions are that file's, and `where()` says so
        self.file: str | None = None

    def where(self, file: str) -> Location:
        end_line, end_col = self.end_line, self.end_col
        if end_line > self.line and end_col == 0:
            # A block value ends at the start of the next line; report the end of its last line.
            end_line, end_col = self.line, self.col + 1
        return Location(self.file or file, self.line + 1, self.col + 1, end_line + 1, end_col + 1)


class Scalar(Node):
    __slots__ = ("value", "text", "tag", "quoted")

    def __init__(self, value, text: str, tag: str, quoted: bool, marks: tuple[int, int, int, int]) -> None:
        super().__init__(*marks)
        self.value = value
        self.text = text
        self.tag = tag
        self.quoted = quoted

    def __repr__(self) -> str:
        return f"Scalar({self.value!r} @{self.line + 1}:{self.col + 1})"


class Mapping(Node):
    __slots__ = ("keys", "values")

    def __init__(self, marks: tuple[int, int, int, int]) -> None:
        super().__init__(*marks)
        self.keys: dict[str, Scalar] = {}
        self.values: dict[str, Node] = {}

    def get(self, key: str) -> Node | None:
        return self.values.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self.values

    def __len__(self) -> int:
        return len(self.values)

    def items(self) -> Iterator[tuple[str, Node]]:
        return iter(self.values.items())

    def at(self, *path: str | int) -> Node | None:
        """Follow keys (str) and sequence indexes (int); None as soon as a step is missing."""
        node: Node | None = self
        for step in path:
            if isinstance(step, int):
                node = (
                    node.items[step]
                    if isinstance(node, Sequence) and -len(node.items) <= step < len(node.items)
                    else None
                )
            else:
                node = node.values.get(step) if isinstance(node, Mapping) else None
            if node is None:
                return None
        return node

    def map(self, key: str) -> Mapping | None:
        node = self.values.get(key)
        return node if isinstance(node, Mapping) else None

    def seq(self, key: str) -> Sequence | None:
        node = self.values.get(key)
        return node if isinstance(node, Sequence) else None

    def scalar(self, key: str) -> Scalar | None:
        node = self.values.get(key)
        return node if isinstance(node, Scalar) else None

    def value(self, key: str, default=None):
        node = self.values.get(key)
        return node.value if isinstance(node, Scalar) else default

    def __repr__(self) -> str:
        return f"Mapping({list(self.values)} @{self.line + 1}:{self.col + 1})"


class Sequence(Node):
    __slots__ = ("items",)

    def __init__(self, marks: tuple[int, int, int, int]) -> None:
        super().__init__(*marks)
        self.items: list[Node] = []

    def __iter__(self) -> Iterator[Node]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"Sequence(len={len(self.items)} @{self.line + 1}:{self.col + 1})"


def nodes(roots: list) -> list[Node]:
    """Every node of these trees, each once however many aliases share it."""
    out: list[Node] = []
    stack: list[Node] = list(roots)
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        if isinstance(n, Mapping):
            stack.extend(n.keys.values())
            stack.extend(n.values.values())
        elif isinstance(n, Sequence):
            stack.extend(n.items)
    return out


def mark_file(roots: list, shown: str) -> list:
    """Trees read from another file (a values file a kustomization names, a Terraform template): each
    node says so, and findings point into that file."""
    for n in nodes(roots):
        n.file = shown
    return roots


def to_plain(node: Node | None, budget: list[int] | None = None):
    """The node as plain Python data (dict/list/scalars), for schema validation of small documents."""
    if budget is None:
        budget = [100_000]
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError("document too large to convert")
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Mapping):
        return {k: to_plain(v, budget) for k, v in node.values.items()}
    if isinstance(node, Sequence):
        return [to_plain(v, budget) for v in node.items]
    return None


# ---------------------------------------------------------------------------------------------
# YAML 1.1 scalar values. ruamel.yaml (with version (1, 1)) resolves the tag; the value is built
# here without ever calling a constructor that could run code or expand anything.

_BOOL_TRUE = {"yes", "true", "on", "y"}


def _int_value(text: str):
    """The integer, or the text when it is not one or lies outside 64 bits (Kubernetes reads int64;
    a 5,000-digit hex value kept as an int would break every message that prints it)."""
    value = _int_of(text)
    if isinstance(value, int) and not -(1 << 63) <= value < (1 << 64):
        return text
    return value


def _int_of(text: str):
    t = text.replace("_", "")
    if len(t) > 100:  # no 64-bit integer is written longer; sexagesimal parts would multiply on
        return text
    sign = -1 if t.startswith("-") else 1
    if t[:1] in "+-":
        t = t[1:]
    try:
        if t.startswith(("0x", "0X")):
            return sign * int(t[2:], 16)
        if t.startswith(("0o", "0O")):
            return sign * int(t[2:], 8)
        if t.startswith(("0b", "0B")):
            return sign * int(t[2:], 2)
        if ":" in t:  # sexagesimal, YAML 1.1
            total = 0
            for part in t.split(":"):
                total = total * 60 + int(part)
            return sign * total
        if len(t) > 1 and t.startswith("0"):  # YAML 1.1 octal
            return sign * int(t, 8)
        return sign * int(t)
    except ValueError:
        return text


def _float_value(text: str):
    t = text.replace("_", "").lower()
    if t in (".inf", "+.inf"):
        return math.inf
    if t == "-.inf":
        return -math.inf
    if t == ".nan":
        return math.nan
    try:
        if ":" in t:
            sign = -1.0 if t.startswith("-") else 1.0
            total = 0.0
            for part in t.lstrip("+-").split(":"):
                total = total * 60 + float(part)
            return sign * total
        return float(t)
    except ValueError:
        return text


def scalar_value(tag: str, text: str, quoted: bool):
    if quoted or not tag.startswith(TAG_PREFIX):
        return text
    kind = tag[len(TAG_PREFIX) :]
    if kind == "str":
        return text
    if kind == "int":
        return _int_value(text)
    if kind == "float":
        return _float_value(text)
    if kind == "bool":
        return text.lower() in _BOOL_TRUE
    if kind == "null":
        return None
    return text  # timestamps, binary, custom tags: keep the text
