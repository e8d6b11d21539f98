"""load: bytes -> text -> YAML documents with positions, plus suppression directives and problems."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.codes import NOT_CHECKABLE
from kvlint.findings import Issue, Location
from kvlint.lazy_re import lazy
from kvlint.load.compose import Document, compose
from kvlint.load.directives import Directive, Span, read_directives
from kvlint.load.source import DEFAULT_MAX_BYTES, LINE_BREAK, SourceText, decode, oversized
from kvlint.load.tree import Mapping, Scalar, Sequence, nodes
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


def load_bytes(
    data: bytes, path: str, max_bytes: int = DEFAULT_MAX_BYTES, real_path: str | None = None
) -> LoadedFile:
    """The file's documents; a Terraform file's are the Kubernetes objects and Helm values it carries
    (load/terraform.py), filled with what its module (the .tf files beside `real_path`) states."""
    source = decode(data, path, max_bytes)
    loaded = LoadedFile(source, issues=list(source.issues))
    if path.endswith(".tf"):
        if not source.issues:
            from kvlint.load import terraform

            roots, issues = terraform.carried(source.text, path, real_path)
            loaded.documents = [Document(i, root) for i, root in enumerate(roots)]
            loaded.issues.extend(issues)
            if "kvlint" in source.text:
                loaded.directives = read_directives(source.lines, path)
        return loaded
    values: tuple[list[Document], list[Issue]] | None = None
    if source.helm_template is not None and not source.issues:
        values = _not_a_template(source, path)
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
    return [(n.line, n.col, n.end_line, n.end_col) for n in _scalars(docs) if n.quoted]


def _not_a_template(source: SourceText, path: str) -> tuple[list[Document], list[Issue]] | None:
    """A file with `{{ … }}` in it is skipped as an unrendered Helm template only when it is one: it
    lies in a chart's templates/ directory, or it does not parse as YAML, or an action stands
    outside any string (`name: {{ .Release.Name }}`). Otherwise (security review F18: one
    `{{ .Release.Name }}` in an annotation hid a 70B-on-L4 Deployment) its documents are read; None
    when the file is a template (`source.helm_template` stays set: the caller reports it)."""
    if "templates" in path.replace("\\", "/").split("/")[:-1]:
        return None
    docs, issues = compose(source.text, path)
    if issues or not docs:
        return None
    for reader in (_values_with_tpl, _kserve_placeholders, _generator_placeholders, _templated_strings):
        found = reader(source, path, docs)
        if found is not None:
            source.helm_template = None
            return docs, issues + found
    return None


def _templated_strings(source: SourceText, path: str, docs: list[Document]) -> list[Issue] | None:
    """When every template action lies inside a string (or a comment), the strings are read as
    written and one KV004 says so, at the first of them; None when an action is YAML structure."""
    spans = sorted(
        (n.line, n.col, n.end_line, n.end_col)
        for n in _scalars(docs)
        if isinstance(n.text, str) and "{{" in n.text
    )
    lines = source.lines
    i = 0  # scalars never overlap and both lists ascend: one sweep, linear in their lengths
    for line, col in _positions(source.text, source.template_offsets):
        while i < len(spans) and (spans[i][2], spans[i][3]) <= (line, col):
            i += 1
        inside = i < len(spans) and (spans[i][0], spans[i][1]) <= (line, col)
        if not inside and not _COMMENT_BEFORE().search(lines[line][:col]):
            return None
    if not spans:
        return []
    a, b, c, d = spans[0]
    n = len(spans)
    which = "this string holds" if n == 1 else f"{n:,} strings hold"
    return [
        Issue(
            NOT_CHECKABLE,
            f"{which} unrendered template text ({{{{ … }}}}){'' if n == 1 else ', the first here'}: read as "
            "written, not as it would render; the rest of the file is checked",
            Location(path, a + 1, b + 1, c + 1, d + 1),
            fix="render the template first if these values matter: helm template RELEASE CHART | kvlint -",
        )
    ]


_COMMENT_BEFORE = lazy(r"(?:^|\s)#")


def _scalars(docs: list[Document]) -> list[Scalar]:
    return [n for n in nodes([d.root for d in docs if d.root is not None]) if isinstance(n, Scalar)]


def _positions(text: str, offsets: list[int]) -> list[tuple[int, int]]:
    """0-based (YAML line, column) of each offset (ascending), in one pass over the text."""
    out: list[tuple[int, int]] = []
    breaks = LINE_BREAK().finditer(text)
    line, start = 0, 0
    nxt = next(breaks, None)
    for off in offsets:
        while nxt is not None and nxt.end() <= off:
            line, start = line + 1, nxt.end()
            nxt = next(breaks, None)
        out.append((line, off - start))
    return out


def _values_with_tpl(source: SourceText, path: str, docs: list[Document]) -> list[Issue] | None:
    """Helm values whose strings hold `{{ … }}` (charts such as llm-d-modelservice render values with
    `tpl`) are values, not an unrendered template: read them when they parse cleanly as YAML and no
    document is a Kubernetes object."""
    for doc in docs:
        root = doc.root
        if not isinstance(root, Mapping) or "apiVersion" in root or "kind" in root:
            return None
    return []


# KServe fills `{{.Name}}`, `{{.Namespace}}`, `{{.Labels.x}}`, `{{.Annotations.x}}` in a serving
# runtime's container from each InferenceService's metadata (kserve/kserve
# pkg/controller/v1beta1/inferenceservice/utils/utils.go ReplacePlaceholders): not a Helm template.
_KSERVE_PLACEHOLDER = lazy(r"\{\{-?\s*\.(?:Name|Namespace|Labels|Annotations)\b[^{}]*?-?\}\}")
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")


def _actions(text: str) -> Iterator[str]:
    """Each `{{ … }}` that closes on its own line, in one linear pass (the regular expression
    `\\{\\{.*?\\}\\}` it replaces retried every `{{` to the line's end: 250 KB of `{{ .x` took 40 s)."""
    i, end = 0, -1
    while True:
        start = text.find("{{", i)
        if start < 0:
            return
        if end < start + 2:  # the first `}}` after this `{{`, found once for every `{{` before it
            end = text.find("}}", start + 2)
            if end < 0:
                return
        newline = text.find("\n", start, end)
        if newline >= 0:  # no `}}` on this line: no action starts on it
            i = newline + 1
            continue
        yield text[start : end + 2]
        i = end + 2


def _kserve_placeholders(source: SourceText, path: str, docs: list[Document]) -> list[Issue] | None:
    """A KServe ServingRuntime / ClusterServingRuntime whose only `{{ … }}` are KServe's own
    placeholders: read it (the placeholders stay as text). Inside an OpenShift Template, whose objects are
    read one by one, the template's `${{NAME}}` parameters are not template actions either."""
    if "ServingRuntime" not in source.text:
        return None
    kinds = {d.root.value("kind") for d in docs if isinstance(d.root, Mapping)}
    text = source.text
    for d in docs:  # an OpenShift Template's objects (extract/kinds/openshift_template.py reads each)
        objects = d.root.get("objects") if isinstance(d.root, Mapping) else None
        if isinstance(objects, Sequence):
            kinds.update(
                str(o.value("kind")) for o in objects.items[:1000] if isinstance(o, Mapping) and "kind" in o
            )
            text = _TEMPLATE_PARAM().sub("", text)
    if any(not _KSERVE_PLACEHOLDER().fullmatch(action) for action in _actions(text)):
        return None
    return [] if kinds & set(RUNTIME_KINDS) else None


# an OpenShift Template parameter substituted as a YAML value (openshift-docs using-templates.adoc)
_TEMPLATE_PARAM = lazy(r"\$\{\{[A-Za-z0-9_]+\}\}")


def _generator_placeholders(source: SourceText, path: str, docs: list[Document]) -> list[Issue] | None:
    """Argo CD ApplicationSets (and Argo CD objects beside them) whose `{{ … }}` all lie inside strings: the generators fill them (argoproj/argo-cd
    docs/operator-manual/applicationset/GoTemplate.md), not Helm; read them, and the reader names the
    placeholders where they stand for a value it checks (extract/kinds/argocd.py)."""
    roots = [d.root for d in docs if isinstance(d.root, Mapping)]
    if not any(r.value("kind") == "ApplicationSet" for r in roots) or any(
        not str(r.value("apiVersion") or "").startswith("argoproj.io/") for r in roots
    ):
        return None  # Argo CD's objects only (an AppProject beside the set), one of them an ApplicationSet
    return [] if _templated_strings(source, path, docs) is not None else None


__all__ = ["Directive", "Document", "LoadedFile", "load_bytes", "load_oversized"]
