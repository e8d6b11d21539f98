"""Kubernetes objects and Helm values as kvlint's YAML trees placed in the file they come from: a YAML
string at its lines in the .tf file, an object built from HCL at its resource's line, a template's
objects in the template's own file."""

from __future__ import annotations

import json
import re
from typing import Any

from kvlint.load.compose import compose
from kvlint.load.tree import Mapping, Node, Sequence

_INTERPOLATION_LINE = re.compile(r"^\s*\$\{.*\}\s*$")


def _relocate(node: Node, line: int, col: int = 0, shift: bool = False) -> None:
    """Place a tree in the .tf file: shifted by `line` lines (a YAML string), or every node at `line`."""
    stack = [node]
    while stack:
        n = stack.pop()
        if shift:
            n.line += line
            n.end_line += line
        else:
            n.line, n.col, n.end_line, n.end_col = line, col, line, col + 1
        if isinstance(n, Mapping):
            stack.extend(n.keys.values())
            stack.extend(n.values.values())
        elif isinstance(n, Sequence):
            stack.extend(n.items)


def from_plain(data: Any, path: str, line: int) -> Mapping | None:
    """A plain object as kvlint's tree, every node at the (0-based) line."""
    if not isinstance(data, dict):
        return None
    docs, issues = compose(json.dumps(data), path)
    if issues or not docs or not isinstance(docs[0].root, Mapping):
        return None
    _relocate(docs[0].root, line)
    return docs[0].root


def from_yaml(text: str, path: str, first_line: int) -> list[Mapping]:
    """The objects of a YAML string whose first line is the .tf file's (0-based) `first_line`."""
    lines = ["" if _INTERPOLATION_LINE.match(x) else x for x in text.split("\n")]
    docs, issues = compose("\n".join(lines), path)
    if issues:
        return []
    out = [d.root for d in docs if isinstance(d.root, Mapping)]
    for root in out:
        _relocate(root, first_line, shift=True)
    return out
