"""YAML written as a string inside a file (KubeRay serveConfigV2, Argo CD `helm.values`, a ConfigMap's
values.yaml key): parsed on its own, every position moved to where the text sits in the outer file, so
a finding inside it points at the outer file's line and column."""

from __future__ import annotations

from kvlint.findings import Issue
from kvlint.load.tree import Mapping, Node, Scalar, Sequence


def shift(node: Node, dline: int, dcol: int, seen: set[int]) -> None:
    if id(node) in seen:
        return
    seen.add(id(node))
    ends_at_line_start = node.end_col == 0 and node.end_line > node.line
    node.line += dline
    node.end_line += dline
    node.col += dcol
    if not ends_at_line_start:  # "the start of the next line" stays that after the move
        node.end_col += dcol
    if isinstance(node, Mapping):
        for k in node.keys.values():
            shift(k, dline, dcol, seen)
        for v in node.values.values():
            shift(v, dline, dcol, seen)
    elif isinstance(node, Sequence):
        for v in node.items:
            shift(v, dline, dcol, seen)


def parse(node: Scalar, path: str, lines: list[str], label: str) -> tuple[Mapping | None, list[Issue]]:
    """The mapping a YAML string holds, located in the outer file; its YAML errors prefixed by `label`."""
    from kvlint.load.compose import compose

    text = str(node.value)
    docs, issues = compose(text, path)
    # A block scalar's content starts on the line after the indicator, indented by its first line.
    start = node.line + 1 if node.quoted and node.end_line > node.line else node.line
    indent = 0
    if start < len(lines):
        first = lines[start]
        indent = len(first) - len(first.lstrip(" "))
    moved = [
        Issue(issue.code, f"{label}: {issue.message}", type(w)(w.file, w.line + start, w.column + indent))
        for issue in issues
        for w in (issue.where,)
    ]
    root = docs[0].root if docs else None
    if isinstance(root, Mapping):
        shift(root, start, indent, set())
        return root, moved
    return None, moved
