"""Mappings built around nodes that already exist, for stacks that spell a pod or container in their
own shape (Dynamo services, llm-d values, docker compose): the generic pod and container readers run
on the result, and every value keeps the position it has in the file."""

from __future__ import annotations

from collections.abc import Callable

from kvlint.load.tree import Mapping, Node, Scalar, Sequence


def mapping(anchor: Node, values: dict[str, Node | dict | None]) -> Mapping:
    """A Mapping at `anchor`'s position holding `values` (nested dicts become Mappings; None is left out)."""
    out = Mapping((anchor.line, anchor.col, anchor.end_line, anchor.end_col))
    out.file = anchor.file
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
    out = Scalar(
        value,
        shown,
        "tag:yaml.org,2002:str",
        False,
        (anchor.line, anchor.col, anchor.end_line, anchor.end_col),
    )
    out.file = anchor.file
    return out


def sequence(anchor: Node, items: list[Node]) -> Sequence:
    out = Sequence((anchor.line, anchor.col, anchor.end_line, anchor.end_col))
    out.file = anchor.file
    out.items = list(items)
    return out


def rebuilt(node: Node, scalar_of: Callable[[Scalar], Node]) -> Node:
    """A copy of a tree with each scalar replaced by `scalar_of(scalar)`, every position kept (keys stay
    as they are): a tool's substitution in values (a Template's parameters, compose's variables)."""
    if isinstance(node, Scalar):
        return scalar_of(node)
    if isinstance(node, Mapping):
        copy = Mapping((node.line, node.col, node.end_line, node.end_col))
        copy.file = node.file
        for key, child in node.items():
            copy.keys[key], copy.values[key] = node.keys[key], rebuilt(child, scalar_of)
        return copy
    if isinstance(node, Sequence):
        return sequence(node, [rebuilt(i, scalar_of) for i in node.items])
    return node


def merged(*parts: Mapping | None) -> dict[str, Node]:
    """Keys of several mappings, later ones winning (as Kubernetes strategic merges do for scalars)."""
    out: dict[str, Node] = {}
    for part in parts:
        if part is not None:
            out.update(part.values)
    return out


# Kubernetes strategic merge patch: list fields merged item by item, by these keys (k8s.io/api core/v1)
MERGE_KEYS = {
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "volumes": "name",
    "containers": "name",  # PodSpec.containers: patchMergeKey name (k8s.io/api core/v1 types.go)
}


def strategic_merge(
    base: Node | None, patch: Node | None, key: str = "", _memo: dict | None = None
) -> Node | None:
    """A strategic merge patch of `patch` onto `base`: maps merge key by key, lists with a merge
    key merge item by item, anything else is replaced. Shared (aliased) nodes are merged once."""
    if patch is None:
        return base
    if base is None:
        return patch
    memo: dict = {} if _memo is None else _memo
    pair = (id(base), id(patch), key)
    if pair in memo:
        return memo[pair]
    out: Node = patch
    if isinstance(base, Mapping) and isinstance(patch, Mapping):
        merged = Mapping((patch.line, patch.col, patch.end_line, patch.end_col))
        merged.file = patch.file
        for k, v in base.items():
            merged.keys[k], merged.values[k] = base.keys[k], v
        for k, v in patch.items():
            merged.keys[k], merged.values[k] = patch.keys[k], strategic_merge(base.get(k), v, k, memo)  # type: ignore[assignment]
        out = merged
    elif MERGE_KEYS.get(key) and isinstance(base, Sequence) and isinstance(patch, Sequence):
        out = sequence(patch, _merge_items(base, patch, MERGE_KEYS[key], memo))
    memo[pair] = out
    return out


def _merge_items(base: Sequence, patch: Sequence, merge_key: str, memo: dict) -> list[Node]:
    items = list(base.items)
    for item in patch.items:
        ident = item.value(merge_key) if isinstance(item, Mapping) else None
        at = next(
            (
                i
                for i, b in enumerate(items)
                if ident is not None and isinstance(b, Mapping) and b.value(merge_key) == ident
            ),
            None,
        )
        if at is None:
            items.append(item)
        else:
            items[at] = strategic_merge(items[at], item, "", memo)  # type: ignore[assignment]
    return items


def in_file(node: Node, file: str, _memo: dict | None = None) -> Node:
    """A copy of `node` (read from `file`, not the file being linted) whose every position says so:
    findings on its values point at that file's own lines. Shared (aliased) nodes stay shared."""
    memo: dict = {} if _memo is None else _memo
    if id(node) in memo:
        return memo[id(node)]
    marks = (node.line, node.col, node.end_line, node.end_col)
    out: Node = node
    if isinstance(node, Scalar):
        out = Scalar(node.value, node.text, node.tag, node.quoted, marks)
    elif isinstance(node, Mapping):
        copy = Mapping(marks)
        memo[id(node)] = copy
        for key, child in node.items():
            k = node.keys[key]
            copy.keys[key] = Scalar(k.value, k.text, k.tag, k.quoted, (k.line, k.col, k.end_line, k.end_col))
            copy.keys[key].file = file
            copy.values[key] = in_file(child, file, memo)
        out = copy
    elif isinstance(node, Sequence):
        seq = Sequence(marks)
        memo[id(node)] = seq
        seq.items = [in_file(i, file, memo) for i in node.items]
        out = seq
    out.file = file
    memo[id(node)] = out
    return out


def from_data(value, anchor: Node) -> Node:
    """Python data (the stock runtime's facts) as nodes located at `anchor`."""
    if isinstance(value, dict):
        return mapping(anchor, {k: from_data(v, anchor) for k, v in value.items()})
    if isinstance(value, list):
        return sequence(anchor, [from_data(v, anchor) for v in value])
    return scalar(anchor, value)
