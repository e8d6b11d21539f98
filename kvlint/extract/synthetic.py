"""Mappings built around nodes that already exist, for stacks that spell a pod or container in their
own shape (Dynamo services, llm-d values, docker compose): the generic pod and container readers run
on the result, and every value keeps the position it has in the file."""

from __future__ import annotations

from kvlint.load.tree import Mapping, Node, Scalar, Sequence


def mapping(anchor: Node, values: dict[str, Node | dict | None]) -> Mapping:
    """A Mapping at `anchor`'s position holding `values` (nested dicts become Mappings; None is left out)."""
    out = Mapping((anchor.line, anchor.col, anchor.end_line, anchor.end_col))
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, dict):
            value = mapping(anchor, value)
            if not value.values:
                continue
        out.values[key] = value
        out.keys[key] = scalar(anchor, key)
    return out


def scalar(anchor: Node, value: object, text: str | None = None) -> Scalar:
    """A Scalar holding `value`, located where `anchor` is."""
    shown = str(value) if text is None else text
    return Scalar(
        value,
        shown,
        "tag:yaml.org,2002:str",
        False,
        (anchor.line, anchor.col, anchor.end_line, anchor.end_col),
    )


def sequence(anchor: Node, items: list[Node]) -> Sequence:
    out = Sequence((anchor.line, anchor.col, anchor.end_line, anchor.end_col))
    out.items = list(items)
    return out


def merged(*parts: Mapping | None) -> dict[str, Node]:
    """Keys of several mappings, later ones winning (as Kubernetes strategic merges do for scalars)."""
    out: dict[str, Node] = {}
    for part in parts:
        if part is not None:
            out.update(part.values)
    return out
