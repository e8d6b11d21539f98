"""load: bytes -> text -> YAML documents with positions, plus suppression directives and problems."""

from __future__ import annotations

import re

from kvlint.codes import NOT_CHECKABLE
from kvlint.findings import Issue
from kvlint.load.compose import Document, compose
from kvlint.load.directives import Directive, Span, read_directives
from kvlint.load.source import DEFAULT_MAX_BYTES, SourceText, decode, oversized
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import field, record


@record
class LoadedFile:
    source: SourceText
    documents: list[Document] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.source.path


def load_bytes(data: bytes, path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadedFile:
    source = decode(data, path, max_bytes)
    loaded = LoadedFile(source, issues=list(source.issues))
    values: tuple[list[Document], list[Issue]] | None = None
    if source.helm_template is not None and not source.issues:
        values = _values_with_tpl(source, path)  # Helm values whose strings the chart renders (tpl)
        if values == ([], []):
            values = _kserve_placeholders(source, path)
    if source.helm_template is not None:
        loaded.issues.append(
            Issue(
                NOT_CHECKABLE,
                "unrendered Helm template ({{ … }}): not checked",
                source.helm_template,
                fix="render it first: helm template RELEASE CHART -f values.yaml | kvlint -",
            )
        )
    if source.issues:
        return loaded
    if source.helm_template is not None:  # one KV004 issue (above); not the deployed YAML yet
        loaded.directives = read_directives(source.lines, path) if "kvlint" in source.text else []
        return loaded
    docs, issues = values if values is not None else compose(source.text, path)
    loaded.documents = docs
    loaded.issues.extend(issues)
    if "kvlint" in source.text:  # directives only from real comments: never inside a string
        loaded.directives = read_directives(source.lines, path, string_spans(docs))
    return loaded


def load_oversized(path: str, size: int, max_bytes: int) -> LoadedFile:
    """A file over the size cap: not read, one KV001 saying so."""
    issue = oversized(path, size, max_bytes)
    return LoadedFile(SourceText(path, "", [issue]), issues=[issue])


def string_spans(docs: list[Document]) -> list[Span]:
    """Where every quoted or block scalar lies (keys included), each shared node once."""
    spans: list[Span] = []
    seen: set[int] = set()
    stack: list[Node] = [d.root for d in docs if d.root is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Scalar):
            if node.quoted:
                spans.append((node.line, node.col, node.end_line, node.end_col))
        elif isinstance(node, Mapping):
            stack.extend(node.keys.values())
            stack.extend(node.values.values())
        elif isinstance(node, Sequence):
            stack.extend(node.items)
    return spans


def _values_with_tpl(source: SourceText, path: str) -> tuple[list[Document], list[Issue]]:
    """Helm values whose strings hold `{{ … }}` (charts such as llm-d-modelservice render values with
    `tpl`) are values, not an unrendered template: read them when they parse cleanly as YAML and no
    document is a Kubernetes object."""
    docs, issues = compose(source.text, path)
    if issues or not docs:
        return [], []
    for doc in docs:
        root = doc.root
        if not isinstance(root, Mapping) or "apiVersion" in root or "kind" in root:
            return [], []
    source.helm_template = None
    return docs, issues


# KServe fills `{{.Name}}`, `{{.Namespace}}`, `{{.Labels.x}}`, `{{.Annotations.x}}` in a serving
# runtime's container from each InferenceService's metadata (kserve/kserve
# pkg/controller/v1beta1/inferenceservice/utils/utils.go ReplacePlaceholders): not a Helm template.
_ACTION = re.compile(r"\{\{.*?\}\}")
_KSERVE_PLACEHOLDER = re.compile(r"\{\{-?\s*\.(?:Name|Namespace|Labels|Annotations)\b[^{}]*?-?\}\}")
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")


def _kserve_placeholders(source: SourceText, path: str) -> tuple[list[Document], list[Issue]]:
    """A KServe ServingRuntime / ClusterServingRuntime whose only `{{ … }}` are KServe's own
    placeholders: read it (the placeholders stay as text) when it parses cleanly."""
    if "ServingRuntime" not in source.text:
        return [], []
    if any(not _KSERVE_PLACEHOLDER.fullmatch(m.group(0)) for m in _ACTION.finditer(source.text)):
        return [], []
    docs, issues = compose(source.text, path)
    kinds = {d.root.value("kind") for d in docs if isinstance(d.root, Mapping)}
    if issues or not docs or not kinds & set(RUNTIME_KINDS):
        return [], []
    source.helm_template = None
    return docs, issues


__all__ = ["Directive", "Document", "LoadedFile", "load_bytes", "load_oversized"]
