"""Compose a YAML stream into position-aware trees, one per document, with located problems.

Only the parser and composer of ruamel.yaml run (the C-backed parser where installed); no
constructor runs, so no tag in the input can create objects, and aliases are shared, never
expanded. Time and memory stay linear in the size of the text, whatever the aliases say.
"""

from __future__ import annotations

from kvlint.bounds import DOCUMENTS_MAX, ISSUES_PER_FILE_MAX, NODES_PER_DOCUMENT_MAX
from kvlint.codes import INVALID_INPUT
from kvlint.findings import Issue, Location
from kvlint.load.tree import TAG_PREFIX, Mapping, Node, Scalar, Sequence, scalar_value
from kvlint.record import record

MAX_EXPANDED_NODES = 1_000_000  # what a reader that expands aliases would build, per document
MAX_DEPTH = 200
_MERGE = TAG_PREFIX + "merge"


@record
class Document:
    index: int  # 0-based position in the stream
    root: Node | None


class _TooBig(Exception):
    pass


class _TooDeep(Exception):
    pass


def _yaml(pure: bool = False):
    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=pure)  # C-backed parser when ruamel.yaml.clib is installed
    y.version = (1, 1)  # Kubernetes (sigs.k8s.io/yaml, go-yaml v2) reads YAML 1.1: yes/no, 017 octal
    y.Resolver = _yaml11_resolver()
    return y


def _yaml11_resolver():
    """ruamel.yaml's own YAML 1.1 implicit rules (same regular expressions, same order), with one
    shared Tag object per type. The stock resolver builds a new Tag for every scalar, and turning
    it back into text costs more than the C parser's work on it: a third of the load time."""
    from ruamel.yaml.nodes import ScalarNode, SequenceNode
    from ruamel.yaml.resolver import BaseResolver, implicit_resolvers
    from ruamel.yaml.tag import Tag

    tags: dict[str, Tag] = {}

    def tag(suffix: str) -> Tag:
        if suffix not in tags:
            tags[suffix] = Tag(suffix=suffix)
            str(tags[suffix])  # computes and caches its text
        return tags[suffix]

    by_first: dict[str | None, list] = {}
    for versions, suffix, regexp, first in implicit_resolvers:
        if (1, 1) in versions:
            for ch in first if first is not None else [None]:
                by_first.setdefault(ch, []).append((tag(suffix), regexp))
    anywhere = by_first.pop(None, [])
    table = {ch: rules + anywhere for ch, rules in by_first.items()}
    str_tag, seq_tag, map_tag = tag(TAG_PREFIX + "str"), tag(TAG_PREFIX + "seq"), tag(TAG_PREFIX + "map")

    class Yaml11Resolver(BaseResolver):
        def __init__(self, version=None, loader=None, loadumper=None) -> None:
            BaseResolver.__init__(self, loader if loader is not None else loadumper)

        @property
        def processing_version(self):  # the pure-Python scanner asks
            return (1, 1)

        def resolve(self, kind, value, implicit):
            if kind is ScalarNode:
                if implicit[0]:
                    for found, regexp in table.get(value[:1], anywhere):
                        if regexp.match(value):
                            return found
                return str_tag
            return seq_tag if kind is SequenceNode else map_tag

    return Yaml11Resolver


_YAML = None
_PURE = None


def _pure_yaml():
    return _yaml(pure=True)


def _marks(n) -> tuple[int, int, int, int]:
    s, e = n.start_mark, n.end_mark
    return (s.line, s.column, e.line, e.column)


class _Builder:
    def __init__(self, path: str, issues: list[Issue]) -> None:
        self.path = path
        self.issues = issues
        self.memo: dict[int, tuple[Node, int]] = {}
        self.found = 0
        self.nodes = 0  # distinct nodes built for the current document

    def build(self, rnode, depth: int = 0) -> tuple[Node, int]:
        """Return (node, expanded size); shared ruamel nodes (aliases) map to shared tree nodes."""
        key = id(rnode)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if depth > MAX_DEPTH:
            raise _TooDeep(rnode)
        self.nodes += 1
        if self.nodes > NODES_PER_DOCUMENT_MAX:
            raise _TooBig(rnode)
        kind = type(rnode).__name__
        out: Node
        if kind == "MappingNode":
            out, size = self._mapping(rnode, depth)
        elif kind == "SequenceNode":
            seq = Sequence(_marks(rnode))
            size = 1
            for item in rnode.value:
                child, csize = self.build(item, depth + 1)
                seq.items.append(child)
                size += csize
            out = seq
        else:
            text = rnode.value if isinstance(rnode.value, str) else str(rnode.value)
            quoted = rnode.style in ("'", '"', "|", ">")
            tag = rnode.tag or ""
            out = Scalar(scalar_value(tag, text, quoted), text, tag, quoted, _marks(rnode))
            size = 1
        self.memo[key] = (out, size)
        return out, size

    def _mapping(self, rnode, depth: int) -> tuple[Mapping, int]:
        out = Mapping(_marks(rnode))
        size = 1
        merged: list[tuple[Scalar, Node]] = []
        for knode, vnode in rnode.value:
            if knode.tag == _MERGE:
                value, vsize = self.build(vnode, depth + 1)
                size += vsize
                sources = value.items if isinstance(value, Sequence) else [value]
                for src in sources:
                    if isinstance(src, Mapping):
                        merged.extend((src.keys[k], v) for k, v in src.values.items())
                    else:
                        self._issue("merge key `<<` needs a mapping or a list of mappings", src)
                continue
            key, ksize = self.build(knode, depth + 1)
            value, vsize = self.build(vnode, depth + 1)
            size += ksize + vsize
            if not isinstance(key, Scalar):
                self._issue("a mapping key must be a plain value, not a collection", key)
                continue
            name = key.text
            if name in out.values:
                first = out.keys[name]
                self._issue(
                    f"duplicate key {name!r} (first at line {first.line + 1}); Kubernetes rejects "
                    "duplicate keys and other YAML readers keep one value silently",
                    key,
                    fix=f"keep one {name!r} and delete the other",
                )
            out.keys[name] = key
            out.values[name] = value
        for key, value in merged:  # explicit keys win over merged ones (YAML merge-key semantics)
            if key.text not in out.values:
                out.keys[key.text] = key
                out.values[key.text] = value
        return out, size

    def _issue(self, message: str, node: Node, fix: str | None = None) -> None:
        self.found += 1
        if self.found <= ISSUES_PER_FILE_MAX:  # 200,000 duplicate keys are not 200,000 findings
            self.issues.append(Issue(INVALID_INPUT, message, node.where(self.path), fix=fix))
        elif self.found == ISSUES_PER_FILE_MAX + 1:
            self.issues.append(
                Issue(
                    INVALID_INPUT,
                    f"more than {ISSUES_PER_FILE_MAX:,} problems like the ones above; the rest are not listed",
                    node.where(self.path),
                )
            )


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
        return Issue(INVALID_INPUT, message, Location(path, line, column), fix=fix)
    if mark is None:
        return Issue(INVALID_INPUT, message, Location(path, 1, 1), fix=fix)
    lines = LINE_BREAK.split(text)
    line, column = mark.line + 1, mark.column + 1
    if line > len(lines):  # the parser's mark sits after the last character
        line, column = len(lines), len(lines[-1]) + 1
        message += " (at the end of the file)"
    column = min(column, len(lines[line - 1]) + 1)
    return Issue(INVALID_INPUT, message, Location(path, line, column), fix=fix)


def compose(text: str, path: str) -> tuple[list[Document], list[Issue]]:
    """All documents of the stream that compose, and the problems found on the way.

    The C-backed parser (libyaml) runs first; where it reports a syntax error, the pure-Python
    parser gets a second look, because the two disagree on a few edge cases (`{H100:1}` in a flow
    mapping is a syntax error to libyaml and a key to PyYAML); only an error both agree on is one."""
    global _YAML, _PURE
    if _YAML is None:
        _YAML = _yaml()
    docs, issues = _compose_with(_YAML, text, path)
    if issues and any(i.message.startswith("YAML syntax error") for i in issues):
        if _PURE is None:
            _PURE = _pure_yaml()
        docs2, issues2 = _compose_with(_PURE, text, path)
        if not any(i.message.startswith("YAML syntax error") for i in issues2):
            return docs2, issues2
    return docs, issues


def _compose_with(yaml, text: str, path: str) -> tuple[list[Document], list[Issue]]:
    from ruamel.yaml.error import YAMLError

    issues: list[Issue] = []
    docs: list[Document] = []
    builder = _Builder(path, issues)
    stream = yaml.compose_all(text)
    index = 0
    while True:
        if index >= DOCUMENTS_MAX:
            issues.append(
                Issue(
                    INVALID_INPUT,
                    f"more than {DOCUMENTS_MAX:,} YAML documents in one file: the first {DOCUMENTS_MAX:,} "
                    "were checked, the rest were not",
                    Location(path, 1, 1),
                    fix="split the file",
                )
            )
            break
        try:
            rnode = next(stream)
        except StopIteration:
            break
        except YAMLError as exc:
            issues.append(
                _located_error(exc, path, text, in_bytes=yaml.Parser.__module__ != "ruamel.yaml.parser")
            )
            break
        except RecursionError:
            issues.append(Issue(INVALID_INPUT, "YAML nesting is too deep to read", Location(path, 1, 1)))
            break
        except (ValueError, TypeError, UnicodeError) as exc:  # reader-level problems in odd input
            issues.append(Issue(INVALID_INPUT, f"cannot read YAML: {exc}", Location(path, 1, 1)))
            break
        if rnode is None or (rnode.tag == TAG_PREFIX + "null" and not getattr(rnode, "value", "")):
            docs.append(Document(index, None))
            index += 1
            continue
        builder.nodes = 0
        try:
            root, size = builder.build(rnode)
        except _TooBig:
            issues.append(
                Issue(
                    INVALID_INPUT,
                    f"document {index + 1} holds more than {NODES_PER_DOCUMENT_MAX:,} values; not checked",
                    Location(path, rnode.start_mark.line + 1, rnode.start_mark.column + 1),
                    fix="split it; no serving manifest comes near this size",
                )
            )
            builder.memo.clear()
            docs.append(Document(index, None))
            index += 1
            continue
        except (_TooDeep, RecursionError):
            issues.append(
                Issue(
                    INVALID_INPUT,
                    f"document {index + 1} nests deeper than {MAX_DEPTH} levels; not checked",
                    Location(path, rnode.start_mark.line + 1, rnode.start_mark.column + 1),
                )
            )
            docs.append(Document(index, None))
            index += 1
            continue
        if size > MAX_EXPANDED_NODES:
            issues.append(
                Issue(
                    INVALID_INPUT,
                    f"document {index + 1} expands to {size:,} nodes through aliases (limit "
                    f"{MAX_EXPANDED_NODES:,}): an alias bomb; not checked",
                    Location(path, rnode.start_mark.line + 1, rnode.start_mark.column + 1),
                    fix="remove the nested anchors and aliases",
                )
            )
            docs.append(Document(index, None))
        else:
            docs.append(Document(index, root))
        builder.memo.clear()
        index += 1
    return docs, issues
