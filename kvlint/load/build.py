"""kvlint's YAML tree built straight from the parser's events (kvlint/load/compose.py runs the parser).

No ruamel.yaml node objects and no recursion: one pass over the events, each value built once,
aliases shared (never expanded), merge keys applied, duplicate keys and collection keys reported.
A document past NODES_PER_DOCUMENT_MAX values or MAX_DEPTH levels stops being built there (its
events are still read, for the syntax errors further on), so the work per document is bounded by
the caps and not by its size. Building from events rather than from composed nodes costs a third
of the time and memory (200,000 duplicate keys: 2.0 s -> 0.7 s).
"""

from __future__ import annotations

from kvlint.bounds import ISSUES_PER_FILE_MAX, NODES_PER_DOCUMENT_MAX
from kvlint.codes import INVALID_INPUT
from kvlint.findings import Issue
from kvlint.load.tree import TAG_PREFIX, Mapping, Node, Scalar, Sequence, scalar_value

MAX_DEPTH = 200
_MERGE = TAG_PREFIX + "merge"


class TooBig(Exception):
    pass


class TooDeep(Exception):
    pass


class _Frame:
    """A collection being built from the parser's events."""

    __slots__ = ("node", "size", "key", "merged", "anchor")

    def __init__(self, node: Node, anchor: str | None) -> None:
        self.node = node
        self.size = 1
        self.key: Node | None = None  # a mapping's key waiting for its value
        self.merged: list[tuple[Scalar, Node]] = []
        self.anchor = anchor


class Builder:
    """Builds kvlint's tree straight from the parser's events (no ruamel.yaml node objects, no
    recursion): one pass, each value once, aliases shared; a document past NODES_PER_DOCUMENT_MAX
    values stops being built at that point, so its cost is bounded by the cap, not by its size."""

    def __init__(self, path: str, issues: list[Issue], resolve) -> None:
        self.path = path
        self.issues = issues
        self.resolve = resolve
        self.found = 0
        self.root_at = (0, 0)  # where the current document's first value starts (0-based)

    def document(self, events) -> tuple[Node | None, int]:
        """The document's root and its expanded size, from the events after DocumentStart up to
        and including DocumentEnd. Raises TooBig / TooDeep having consumed the document."""
        anchors: dict[str, tuple[Node, int]] = {}
        open_anchors: set[str] = set()
        stack: list[_Frame] = []
        root: tuple[Node, int] | None = None
        nodes = 0
        problem: type[Exception] | None = None
        self.root_at = (0, 0)
        for ev in events:
            kind = type(ev).__name__
            if kind == "DocumentEndEvent":
                break
            if problem is not None:
                continue  # the rest of a document that is not checked: parsed (for errors), not built
            done: tuple[Node, int] | None = None
            if kind == "ScalarEvent" or kind.endswith("StartEvent"):
                if nodes == 0:
                    self.root_at = (ev.start_mark.line, ev.start_mark.column)
                nodes += 1
                if nodes > NODES_PER_DOCUMENT_MAX:
                    problem = TooBig
                    continue
            if kind == "ScalarEvent":
                done = self._scalar(ev)
                if ev.anchor is not None:
                    anchors[ev.anchor] = done
            elif kind == "AliasEvent":
                if ev.anchor in open_anchors:  # an alias inside its own anchor: endless nesting
                    problem = TooDeep
                    continue
                if ev.anchor not in anchors:
                    from ruamel.yaml.composer import ComposerError

                    raise ComposerError(None, None, "found undefined alias", ev.start_mark)
                done = anchors[ev.anchor]
            elif kind in ("MappingStartEvent", "SequenceStartEvent"):
                if len(stack) >= MAX_DEPTH:
                    problem = TooDeep
                    continue
                marks = (ev.start_mark.line, ev.start_mark.column, 0, 0)
                node: Node = Mapping(marks) if kind == "MappingStartEvent" else Sequence(marks)
                stack.append(_Frame(node, ev.anchor))
                if ev.anchor is not None:
                    open_anchors.add(ev.anchor)
                continue
            elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                frame = stack.pop()
                frame.node.end_line, frame.node.end_col = ev.end_mark.line, ev.end_mark.column
                if isinstance(frame.node, Mapping):
                    self._merge(frame)
                done = (frame.node, frame.size)
                if frame.anchor is not None:
                    open_anchors.discard(frame.anchor)
                    anchors[frame.anchor] = done
            else:
                continue
            if stack:
                self._add(stack[-1], *done)
            else:
                root = done
        if problem is not None:
            raise problem()
        return root if root is not None else (None, 0)

    def _scalar(self, ev) -> tuple[Scalar, int]:
        text = ev.value if isinstance(ev.value, str) else str(ev.value)
        quoted = ev.style in ("'", '"', "|", ">")
        tag = ev.tag
        if tag is None or tag == "!":
            tag = self.resolve(text, ev.implicit)
        s, e = ev.start_mark, ev.end_mark
        return Scalar(
            scalar_value(tag, text, quoted), text, tag, quoted, (s.line, s.column, e.line, e.column)
        ), 1

    def _add(self, frame: _Frame, node: Node, size: int) -> None:
        frame.size += size
        parent = frame.node
        if isinstance(parent, Sequence):
            parent.items.append(node)
            return
        assert isinstance(parent, Mapping)
        if frame.key is None:
            frame.key = node
            return
        key, frame.key = frame.key, None
        if isinstance(key, Scalar) and key.tag == _MERGE:
            sources = node.items if isinstance(node, Sequence) else [node]
            for src in sources:
                if isinstance(src, Mapping):
                    frame.merged.extend((src.keys[k], v) for k, v in src.values.items())
                else:
                    self._issue("merge key `<<` needs a mapping or a list of mappings", src)
            return
        if not isinstance(key, Scalar):
            self._issue("a mapping key must be a plain value, not a collection", key)
            return
        name = key.text
        if name in parent.values:
            first = parent.keys[name]
            self._issue(
                f"duplicate key {name!r} (first at line {first.line + 1}); Kubernetes rejects "
                "duplicate keys and other YAML readers keep one value silently",
                key,
                fix=f"keep one {name!r} and delete the other",
            )
        parent.keys[name] = key
        parent.values[name] = node

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

    @staticmethod
    def _merge(frame: _Frame) -> None:
        out = frame.node
        assert isinstance(out, Mapping)
        for key, value in frame.merged:  # explicit keys win over merged ones (YAML merge-key semantics)
            if key.text not in out.values:
                out.keys[key.text] = key
                out.values[key.text] = value
