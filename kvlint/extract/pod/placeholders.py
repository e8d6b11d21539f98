"""Values a tool fills in later (an ApplicationSet generator's `{{ … }}`, an OpenShift Template parameter with
no value): left out of what is read, so no placeholder is taken for a model id or refused as a number, and
the keys that held one are told back so the reader can name them."""

from __future__ import annotations

from collections.abc import Callable

from kvlint.extract.pod import synthetic as syn
from kvlint.load.tree import Mapping, Node, Scalar, Sequence

Held = list[tuple[str, Node]]


def without(values: Mapping, is_placeholder: Callable[[Node], bool], at: str = "") -> tuple[Mapping, Held]:
    """A copy of `values` without its placeholders, and (key path, node) of each one left out."""
    out = Mapping((values.line, values.col, values.end_line, values.end_col))
    out.file = values.file
    held: Held = []
    for key, node in values.items():
        where = f"{at}.{key}" if at else key
        if is_placeholder(node):
            held.append((where, node))
            continue
        if isinstance(node, Mapping):
            node, more = without(node, is_placeholder, where)
            held.extend(more)
        elif isinstance(node, Sequence):
            node, more = _items(node, is_placeholder, where)
            held.extend(more)
        out.keys[key], out.values[key] = values.keys[key], node
    return out, held


def _items(seq: Sequence, is_placeholder: Callable[[Node], bool], where: str) -> tuple[Sequence, Held]:
    """A list without its placeholder items; a flag whose value is one goes with it (`--max-model-len`, `{{len}}`)."""
    kept: list[Node] = []
    held: Held = []
    for item in seq.items:
        if is_placeholder(item):
            held.append((where, item))
            last = kept[-1] if kept else None
            if isinstance(last, Scalar) and str(last.value).startswith("-") and "=" not in str(last.value):
                kept.pop()
            continue
        if isinstance(item, Mapping):
            item, more = without(item, is_placeholder, f"{where}[{len(kept)}]")
            held.extend(more)
        kept.append(item)
    return syn.sequence(seq, kept), held
