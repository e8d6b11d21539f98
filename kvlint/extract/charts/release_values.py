"""The values a GitOps object hands a Helm chart (Argo CD Application `spec.source.helm`, Flux HelmRelease
`spec.values` / `valuesFrom`), put together as Helm would merge them and read as any values file is: the
readers of documents without apiVersion/kind (extract/registry.py DOCUMENT_KINDS) pick the chart's layout
by its keys, as they do for a values.yaml.

- Merging follows Helm's coalescing (helm/helm pkg/chartutil/coalesce.go): maps merge key by key, any other
  value (a list too) is replaced by the later one, and a `null` deletes the key.
- `--set name=value` paths (Argo CD `helm.parameters` are passed to Helm so; argoproj/argo-cd
  reposerver/repository/repository.go helmTemplate): keys split on `.` (`\\.` keeps a dot), `key[N]` an item
  of a list; the value typed as Helm's strvals parser types it (helm/helm pkg/strvals/parser.go typedVal:
  `true`/`false` a bool, `null` nothing, a whole number without a leading zero an integer, else a string).
"""

from __future__ import annotations

import re

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment
from kvlint.extract.pod import synthetic as syn
from kvlint.findings import Issue, Location, Severity
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import replace

_INDEX = re.compile(r"^(.*?)\[(\d{1,9})\]$")
_SPLIT = re.compile(r"(?<!\\)\.")
# a `[N]` past MAX_INDEX is refused rather than padded (Helm pads with nulls; 10,000 nulls help no one), and a
# path of MAX_STEPS keys or more too (values nest a few levels, not thousands)
MAX_INDEX = 1000
MAX_STEPS = 64


def merge(base: Node | None, over: Node | None) -> Node | None:
    """`over` coalesced onto `base` (a null in `over` removes the key)."""
    if over is None:
        return base
    if not (isinstance(base, Mapping) and isinstance(over, Mapping)):
        return over
    out = Mapping((over.line, over.col, over.end_line, over.end_col))
    out.file = over.file
    for key, value in base.items():
        out.keys[key], out.values[key] = base.keys[key], value
    for key, value in over.items():
        if isinstance(value, Scalar) and value.value is None and not value.quoted:
            out.values.pop(key, None)
            out.keys.pop(key, None)
            continue
        merged = merge(base.get(key), value)
        if merged is not None:
            out.keys[key], out.values[key] = over.keys[key], merged
    return out


def set_value(text: str, force_string: bool = False) -> object:
    """A `--set` value as Helm types it (`--set-string`: always the text)."""
    if force_string:
        return text
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    if re.fullmatch(r"-?(0|[1-9]\d{0,17})", text):
        return int(text)
    return text


def path_steps(name: str) -> list[str | int] | None:
    """`a.b\\.c[0].d` -> ["a", "b.c", 0, "d"]; None for a path Helm would refuse or one too far out."""
    steps: list[str | int] = []
    if name.count(".") >= MAX_STEPS or name.count("[") >= MAX_STEPS:
        return None
    for part in _SPLIT.split(name):
        indexes: list[int] = []
        while True:
            m = _INDEX.match(part)
            if m is None:
                break
            part, indexes = m.group(1), [int(m.group(2)), *indexes]
        if not part or "[" in part or "]" in part or any(i > MAX_INDEX for i in indexes):
            return None
        steps.append(part.replace("\\.", "."))
        steps.extend(indexes)
    return steps


def put(node: Node | None, steps: list[str | int], leaf: Node, anchor: Node) -> Node:
    """`node` with `leaf` set at `steps`, the nodes on the way copied (the document's own are left as written)."""
    if not steps:
        return leaf
    step, rest = steps[0], steps[1:]
    if isinstance(step, int):
        items = list(node.items) if isinstance(node, Sequence) else []
        while len(items) <= step:
            items.append(syn.scalar(anchor, None, "null"))
        items[step] = put(items[step], rest, leaf, anchor)
        return syn.sequence(node if isinstance(node, Sequence) else anchor, items)
    base = node if isinstance(node, Mapping) else None
    at = base if base is not None else anchor
    out = Mapping((at.line, at.col, at.end_line, at.end_col))
    out.file = at.file
    if base is not None:
        out.keys.update(base.keys)
        out.values.update(base.values)
    out.values[step] = put(base.get(step) if base is not None else None, rest, leaf, anchor)
    out.keys.setdefault(step, syn.scalar(anchor, step))
    return out


def engine_named(*texts: str) -> str | None:
    """The engine a chart name, repository URL or path names by a word of its images (`vllm-stack` -> vllm)."""
    low = " ".join(texts).lower()
    words = set(re.split(r"[^a-z0-9.]+", low))
    for engine in engines.every():
        if any(word in words or "-" in word and word in low for word in engine.image_words):
            return engine.name
    return None


def read(
    values: Mapping, path: str, base_dir: str, lines: list[str], kind: str, name: str
) -> list[Deployment]:
    """The workloads these values configure, as the chart they match renders them, named after the object
    that installs them (`Application/<name>`, `HelmRelease/<name>`, the chart's own name after it)."""
    from kvlint.extract import registry

    found = registry.extract_other(values, path, base_dir, lines)
    extra: list[Issue] = registry.document_issues(values, path)
    for d in found:
        inner = d.name if d.name not in ("", "(root)") else ""
        rename(d, kind, f"{name}/{inner}" if inner and name else (name or inner))
    if found:
        found[0].issues.extend(extra)
    return found


def rename(d: Deployment, kind: str, name: str) -> None:
    """Name the workload `kind/name`, and its issues that begin with its old label after it."""
    said = d.label() + ": "
    d.kind, d.name = kind, name
    d.issues = [
        replace(i, message=d.label() + ": " + i.message[len(said) :]) if i.message.startswith(said) else i
        for i in d.issues
    ]


def elsewhere(message: str, where: Location) -> Issue:
    """An info that part of what the object installs is set where kvlint does not read (a values file in the
    chart's repository, a ConfigMap not found, a placeholder): the rest is checked."""
    return Issue(NOT_CHECKABLE, message, where, severity=Severity.INFO)
