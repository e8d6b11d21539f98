"""The instances a Terraform block stands for, and its `dynamic` blocks written out, for the readers of
.tf files (node pools: one `google_container_node_pool` with `for_each = local.node_pools` is one pool
per element; a `dynamic "guest_accelerator"` is the accelerators it adds).

Terraform's rules (developer.hashicorp.com/terraform/language/meta-arguments/for_each, and
/expressions/dynamic-blocks): `for_each` over a map gives one instance per key, `each.key` the key and
`each.value` its value; over a set of strings `each.key` and `each.value` are both the string; a
`count` of 0 creates none, N creates N alike (read once, `count.index` 0: /meta-arguments/count). A
`dynamic "name"` block gives one `name` block per element of its `for_each`, its `content` evaluated
with the iterator (`name`, or the `iterator` argument) bound to `{key, value}`: a list's key is the index.

What `for_each` iterates over is evaluated (terraform_eval.py); when it is unknown the block is read
once as written (today's reading: its values that need `each` stay unknown); a dynamic block whose
`for_each` is unknown is named in the result's UNKNOWN_BLOCKS entry. At most INSTANCES_MAX instances of
one block and DYNAMIC_MAX blocks of one `dynamic`.
"""

from __future__ import annotations

from typing import Any

from kvlint.load import terraform_eval as tf_eval
from kvlint.load import terraform_names as tf_names

INSTANCES_MAX = 64
DYNAMIC_MAX = 64
UNKNOWN_BLOCKS = "__unknown_blocks__"  # the dynamic blocks of a body whose for_each is not known
_DEPTH = 12  # nested blocks written out


def instances(body: dict[str, Any], scope: tf_eval.Scope) -> list[tuple[Any, dict[str, Any]]]:
    """(each.key, the body evaluated with `each` bound) per instance; [(None, body)] evaluated without
    `each` when the block has no for_each or an unknown one (an empty known one, or a count of 0, has
    no instances)."""
    if "for_each" not in body:
        count = tf_eval.value_of(body["count"], scope) if "count" in body else None
        if isinstance(count, int) and not isinstance(count, bool) and count <= 0:
            return []  # `count = var.enabled ? 1 : 0` with the module's value false: not created
        if isinstance(count, int) and not isinstance(count, bool):
            return [(None, expand(body, scope.bind({"count": {"index": 0}})))]  # alike but for the index
        return [(None, expand(body, scope))]
    got = tf_eval.value_of(body["for_each"], scope)
    pairs = _pairs(got)
    if pairs is None:
        return [(None, expand(body, scope))]
    return [
        (key, expand(body, scope.bind({"each": {"key": key, "value": value}})))
        for key, value in pairs[:INSTANCES_MAX]
    ]


def _pairs(coll: Any) -> list[tuple[Any, Any]] | None:
    if isinstance(coll, dict):
        return sorted(coll.items())
    if isinstance(coll, list) and all(isinstance(x, str) for x in coll):
        return [(x, x) for x in sorted(set(coll))]  # a set of strings
    return None


def expand(body: dict[str, Any], scope: tf_eval.Scope, depth: int = 0) -> dict[str, Any]:
    """A block's body with its values evaluated and each `dynamic` block written out as the blocks it
    generates (module docstring)."""
    out: dict[str, Any] = {}
    if depth > _DEPTH:
        return out
    for key, value in body.items():
        if depth == 0 and key in ("for_each", "count"):  # the block's meta-arguments (a nested
            continue  # block's `count`, guest_accelerator's, is its own)
        if key == "dynamic" and isinstance(value, list):
            for item in value:
                for label, spec in item.items() if isinstance(item, dict) else ():
                    if not str(label).startswith("__") and isinstance(spec, dict):
                        _dynamic(out, str(label).strip('"'), spec, scope, depth)
        elif _is_blocks(value):
            out.setdefault(key, []).extend(
                expand(b, scope, depth + 1) | {"__is_block__": True} for b in value
            )
        elif key.startswith("__"):
            out[key] = value
        else:
            out[key] = tf_names.fill_scoped(value, scope)
    return out


def _dynamic(out: dict[str, Any], label: str, spec: dict[str, Any], scope: tf_eval.Scope, depth: int) -> None:
    pairs = _dynamic_pairs(tf_eval.value_of(spec.get("for_each"), scope))
    content = spec.get("content")
    content = content[0] if isinstance(content, list) and content else content
    if pairs is None or not isinstance(content, dict):
        out.setdefault(UNKNOWN_BLOCKS, []).append(label)
        return
    iterator = spec.get("iterator")
    name = iterator.strip('"') if isinstance(iterator, str) and "${" not in iterator else label
    for key, value in pairs[:DYNAMIC_MAX]:
        inner = scope.bind({name: {"key": key, "value": value}})
        out.setdefault(label, []).append(expand(content, inner, depth + 1) | {"__is_block__": True})


def _dynamic_pairs(coll: Any) -> list[tuple[Any, Any]] | None:
    if isinstance(coll, dict):
        return sorted(coll.items())
    if isinstance(coll, list):
        return list(enumerate(coll))
    return None


def _is_blocks(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(b, dict) and b.get("__is_block__") for b in v)
