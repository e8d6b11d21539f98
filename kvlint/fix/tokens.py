"""Every scalar of a YAML text as the source writes it: its exact span, style, decoration and parent.

A finding's location comes from decoded values (escapes resolved, aliases followed to their anchor);
an edit must be placed on source characters. The parser's events give each scalar's exact source
span (anchor, tag and quotes included) and the collection it belongs to, so an edit can be checked
against them: placed only where each source character is the character it decodes to, and an
insertion only where the grammar takes one (kvlint/fix/materialize.py).
"""

from __future__ import annotations

import bisect

from kvlint.record import record

BLOCK_SEQ, FLOW_SEQ, BLOCK_MAP, FLOW_MAP = "block-seq", "flow-seq", "block-map", "flow-map"


@record(frozen=True)
class ScalarToken:
    start: int  # offset of the token's first character (its anchor or tag when it has one)
    end: int  # offset after its last character (its closing quote)
    style: str  # "" plain, '"', "'", "|", ">"
    decorated: bool  # written with an anchor (`&a`) or a tag (`!!str`): the text is not the value alone
    parent: str  # BLOCK_SEQ, FLOW_SEQ, BLOCK_MAP, FLOW_MAP, or "" at the root
    is_key: bool
    parent_col: int  # the parent collection's column (a block sequence's `-`, a block mapping's keys)
    single_line: bool

    @property
    def content(self) -> tuple[int, int]:
        """The span of the scalar's own characters: inside its quotes; after a block scalar's header."""
        if self.style in ("'", '"'):
            return self.start + 1, self.end - 1
        return self.start, self.end


class Tokens:
    """The scalars of a text, ordered by offset; `None`-safe lookups by span. The scan keeps a
    tuple of each scalar's fields and makes the ScalarToken of the few a fix looks up (a 1 MB
    args list has 72,000 scalars and one edit: a record made for each added half the scan's time)."""

    def __init__(self, text: str, starts: list[int]) -> None:
        self.text = text
        self._line_starts = starts
        self._rows: list[tuple] = []  # a ScalarToken's fields, in offset order (no parser event is kept)
        self._made: dict[int, ScalarToken] = {}
        self.ok = self._scan()
        self._keys = [row[0] for row in self._rows]

    def _offset(self, mark) -> int:
        return self._line_starts[min(mark.line, len(self._line_starts) - 1)] + mark.column

    def _scan(self) -> bool:
        from ruamel.yaml.error import YAMLError

        from kvlint.load.compose import parse_events

        stack: list[list] = []  # [kind, column, items seen]
        try:
            for ev in parse_events(self.text):
                kind = type(ev).__name__
                if kind in ("MappingStartEvent", "SequenceStartEvent"):
                    self._count(stack)
                    seq = kind == "SequenceStartEvent"
                    flow = bool(ev.flow_style)
                    name = (FLOW_SEQ if flow else BLOCK_SEQ) if seq else (FLOW_MAP if flow else BLOCK_MAP)
                    stack.append([name, ev.start_mark.column, 0])
                elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                    stack.pop()
                elif kind in ("ScalarEvent", "AliasEvent"):
                    is_key = bool(stack) and stack[-1][0] in (BLOCK_MAP, FLOW_MAP) and stack[-1][2] % 2 == 0
                    self._count(stack)
                    if kind == "ScalarEvent":
                        self._rows.append(self._row(ev, stack, is_key))
        except (YAMLError, ValueError, TypeError, RecursionError):
            return False
        self._rows.sort(key=lambda row: row[0])
        return True

    @staticmethod
    def _count(stack: list[list]) -> None:
        if stack:
            stack[-1][2] += 1

    def _row(self, ev, stack: list[list], is_key: bool) -> tuple:
        parent, col = (stack[-1][0], stack[-1][1]) if stack else ("", 0)
        return (
            self._offset(ev.start_mark),
            self._offset(ev.end_mark),
            ev.style or "",
            ev.anchor is not None or (ev.tag is not None and ev.tag != "!"),
            parent,
            is_key,
            col,
            ev.start_mark.line == ev.end_mark.line,
        )

    def _token(self, i: int) -> ScalarToken:
        tok = self._made.get(i)
        if tok is None:
            tok = self._made[i] = ScalarToken(*self._rows[i])
        return tok

    def holding(self, start: int, end: int) -> ScalarToken | None:
        """The scalar whose source span holds [start, end)."""
        i = bisect.bisect_right(self._keys, start) - 1
        if i < 0:
            return None
        tok = self._token(i)
        return tok if tok.start <= start and end <= tok.end else None

    def literal(self, tok: ScalarToken, start: int, end: int) -> str:
        """Why the characters [start, end) of `tok` are not the characters they decode to, or ""."""
        if tok.decorated:
            return "the value is written with a YAML anchor or tag (an alias may share it)"
        upto = self.text[tok.start : end]  # a column before the first escape is its character's
        if tok.style == '"' and "\\" in upto:
            return "the value's text has escapes (\\x, \\u …): its characters are not the value's"
        if tok.style == "'" and "''" in upto[1:]:
            return "the value's text has an escaped quote ('')"
        lo, hi = tok.content
        if not lo <= start <= end <= hi:
            return "the edit is not inside the value's characters"
        if "\n" in self.text[start:end] or "\r" in self.text[start:end]:
            return "the edit spans a line break"
        return ""
