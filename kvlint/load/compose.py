"""Compose a YAML stream into position-aware trees, one per document, with located problems.

Only the parser and composer of ruamel.yaml run (the C-backed parser where installed); no
constructor runs, so no tag in the input can create objects, and aliases are shared, never
expanded. Time and memory stay linear in the size of the text, whatever the aliases say.
"""

from __future__ import annotations

from kvlint.bounds import DOCUMENTS_MAX, NODES_PER_DOCUMENT_MAX
from kvlint.codes import INVALID_INPUT
from kvlint.findings import Issue, IssueKind, Location
from kvlint.load.build import MAX_DEPTH, Builder, TooBig, TooDeep
from kvlint.load.tree import TAG_PREFIX, Node, Scalar
from kvlint.record import record

MAX_EXPANDED_NODES = 1_000_000  # what a reader that expands aliases would build, per document


@record
class Document:
    index: int  # 0-based position in the stream
    root: Node | None


def _yaml(pure: bool = False):
    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=pure)  # C-backed parser when ruamel.yaml.clib is installed
    y.version = (1, 1)  # Kubernetes (sigs.k8s.io/yaml, go-yaml v2) reads YAML 1.1: yes/no, 017 octal
    y.Resolver = _yaml11_resolver()
    return y


_RULES: tuple[dict, list] | None = None


def _rules() -> tuple[dict, list]:
    """ruamel.yaml's own YAML 1.1 implicit rules (same regular expressions, same order), by the
    scalar's first character: (table, rules for any first character)."""
    global _RULES
    if _RULES is None:
        from ruamel.yaml.resolver import implicit_resolvers

        by_first: dict[str | None, list] = {}
        for versions, suffix, regexp, first in implicit_resolvers:
            if (1, 1) in versions:
                for ch in first if first is not None else [None]:
                    by_first.setdefault(ch, []).append((suffix, regexp))
        anywhere = by_first.pop(None, [])
        _RULES = ({ch: rules + anywhere for ch, rules in by_first.items()}, anywhere)
    return _RULES


def _scalar_resolver():
    """(text, implicit) -> the scalar's tag, as a composer resolves an untagged scalar: a plain
    scalar by the YAML 1.1 rules, a quoted or block one as a string."""
    table, anywhere = _rules()
    str_tag = TAG_PREFIX + "str"

    def resolve(value: str, implicit) -> str:
        if implicit[0]:
            for suffix, regexp in table.get(value[:1], anywhere):
                if regexp.match(value):
                    return str(suffix)
        return str_tag

    return resolve


def _yaml11_resolver():
    """The resolver the parser is configured with (it reads events only: kvlint's own builder
    resolves scalars, _scalar_resolver); the pure-Python scanner asks it for the YAML version."""
    from ruamel.yaml.resolver import BaseResolver

    class Yaml11Resolver(BaseResolver):
        def __init__(self, version=None, loader=None, loadumper=None) -> None:
            BaseResolver.__init__(self, loader if loader is not None else loadumper)

        @property
        def processing_version(self):  # the pure-Python scanner asks
            return (1, 1)

    return Yaml11Resolver


_YAML = None
_PURE = None


def _pure_yaml():
    return _yaml(pure=True)


def _located_error(exc, path: str, text: str, in_bytes: bool = False) -> Issue:
    """The error at its place; `in_bytes`: the parser (libyaml) counts a ReaderError's position in
    UTF-8 bytes, not characters."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {problem}"
    ctx_mark = getattr(exc, "context_mark", None)
    if context and ctx_mark is not None and ctx_mark is not mark:
        message += f" ({context} at line {ctx_mark.line + 1})"
    fix = None
    if "cannot start any token" in problem and mark is not None:
        fix = "YAML does not allow tab characters for indentation; indent with spaces"
    from kvlint.load.source import LINE_BREAK, position

    at = getattr(exc, "position", None)  # ReaderError (a control character): where it is
    if mark is None and isinstance(at, int) and in_bytes:
        at = len(text.encode("utf-8", "surrogatepass")[:at].decode("utf-8", "ignore"))
    if mark is None and isinstance(at, int) and 0 <= at <= len(text):
        line, column = position(text, at)
        return Issue(
            INVALID_INPUT, message, Location(path, line, column), fix=fix, kind=IssueKind.YAML_SYNTAX
        )
    if mark is None:
        return Issue(INVALID_INPUT, message, Location(path, 1, 1), fix=fix, kind=IssueKind.YAML_SYNTAX)
    lines = LINE_BREAK().split(text)
    line, column = mark.line + 1, mark.column + 1
    if line > len(lines):  # the parser's mark sits after the last character
        line, column = len(lines), len(lines[-1]) + 1
        message += " (at the end of the file)"
    column = min(column, len(lines[line - 1]) + 1)
    return Issue(INVALID_INPUT, message, Location(path, line, column), fix=fix, kind=IssueKind.YAML_SYNTAX)


# The pure-Python parser is 10-30 times slower than libyaml (about 18 us an event): its second look
# (see compose) stops after this many events (~0.45 s), and libyaml's error then stands.
SECOND_LOOK_EVENTS = 25_000


class _OverBudget(Exception):
    pass


def compose(text: str, path: str) -> tuple[list[Document], list[Issue]]:
    """All documents of the stream that compose, and the problems found on the way.

    The C-backed parser (libyaml) runs first; where it reports a syntax error, the pure-Python
    parser gets a second look, because the two disagree on a few edge cases (`{H100:1}` in a flow
    mapping, a `\\ud800` escape: errors to libyaml, text to the other and to Kubernetes' reader);
    only an error both agree on is one. The second look is bounded (SECOND_LOOK_EVENTS): a
    megabyte with a syntax error near its end keeps libyaml's error instead of costing seconds."""
    global _YAML, _PURE
    if _YAML is None:
        _YAML = _yaml()
    docs, issues = _compose_with(_YAML, text, path)
    if any(i.kind is IssueKind.YAML_SYNTAX for i in issues):
        if _PURE is None:
            _PURE = _pure_yaml()
        try:
            docs2, issues2 = _compose_with(_PURE, text, path, SECOND_LOOK_EVENTS)
        except _OverBudget:
            return docs, issues
        if not any(i.kind is IssueKind.YAML_SYNTAX for i in issues2):
            return docs2, issues2
    return docs, issues


def _budgeted(events, budget: int):
    for n, ev in enumerate(events):
        if n >= budget:
            raise _OverBudget
        yield ev


def _compose_with(yaml, text: str, path: str, budget: int = 0) -> tuple[list[Document], list[Issue]]:
    from ruamel.yaml.error import YAMLError

    issues: list[Issue] = []
    docs: list[Document] = []
    builder = Builder(path, issues, _scalar_resolver())
    events = iter(yaml.parse(text)) if not budget else _budgeted(yaml.parse(text), budget)
    kept, found = 0, 0
    try:
        for ev in events:
            if type(ev).__name__ != "DocumentStartEvent":
                continue
            if len(docs) >= DOCUMENTS_MAX:
                issues.append(
                    Issue(
                        INVALID_INPUT,
                        f"more than {DOCUMENTS_MAX:,} YAML documents in one file: the first "
                        f"{DOCUMENTS_MAX:,} were checked, the rest were not",
                        Location(path, 1, 1),
                        fix="split the file",
                    )
                )
                break
            docs.append(_document(builder, events, len(docs), path, issues))
            kept, found = len(issues), builder.found  # a document the parser fails in reports that alone
    except YAMLError as exc:
        del issues[kept:]
        builder.found = found
        issues.append(
            _located_error(exc, path, text, in_bytes=yaml.Parser.__module__ != "ruamel.yaml.parser")
        )
    except RecursionError:
        issues.append(Issue(INVALID_INPUT, "YAML nesting is too deep to read", Location(path, 1, 1)))
    except (ValueError, TypeError, UnicodeError) as exc:  # reader-level problems in odd input
        issues.append(Issue(INVALID_INPUT, f"cannot read YAML: {exc}", Location(path, 1, 1)))
    return docs, issues


def _document(builder: Builder, events, index: int, path: str, issues: list[Issue]) -> Document:
    """The next document of the stream, or a Document without a root and the issue saying why."""
    try:
        root, size = builder.document(events)
    except TooBig:
        issues.append(
            Issue(
                INVALID_INPUT,
                f"document {index + 1} holds more than {NODES_PER_DOCUMENT_MAX:,} values; not checked",
                Location(path, builder.root_at[0] + 1, builder.root_at[1] + 1),
                fix="split it; no serving manifest comes near this size",
            )
        )
        return Document(index, None)
    except TooDeep:
        issues.append(
            Issue(
                INVALID_INPUT,
                f"document {index + 1} nests deeper than {MAX_DEPTH} levels; not checked",
                Location(path, builder.root_at[0] + 1, builder.root_at[1] + 1),
            )
        )
        return Document(index, None)
    if root is None or (isinstance(root, Scalar) and root.tag == TAG_PREFIX + "null" and not root.text):
        return Document(index, None)
    if size > MAX_EXPANDED_NODES:
        issues.append(
            Issue(
                INVALID_INPUT,
                f"document {index + 1} expands to {size:,} nodes through aliases (limit "
                f"{MAX_EXPANDED_NODES:,}): an alias bomb; not checked",
                Location(path, root.line + 1, root.col + 1),
                fix="remove the nested anchors and aliases",
            )
        )
        return Document(index, None)
    return Document(index, root)


def parse_events(text: str):
    """The parser's events for `text`, from the parser compose uses (kvlint/fix/tokens.py reads each
    scalar's exact source span from them)."""
    global _YAML
    if _YAML is None:
        _YAML = _yaml()
    return _YAML.parse(text)
