"""Positions as editors and GitHub count them (security review F29).

YAML 1.1 — and ruamel.yaml's marks — count NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH
SEPARATOR (U+2029) as line breaks; GitHub annotations, SARIF viewers and editors count only
LF, CRLF and CR. Left alone, one U+2028 in a quoted string would move every later annotation a
line down. Findings are therefore reported on physical lines: a YAML line that follows one of
those three separators continues the physical line, its columns shifted by what precedes it.
"""

from __future__ import annotations

from kvlint.findings import Finding, Location
from kvlint.load.source import LINE_BREAK, PHYSICAL_BREAK
from kvlint.record import replace

_UNICODE_BREAKS = "\x85\u2028\u2029"


def needed(text: str) -> bool:
    return any(c in text for c in _UNICODE_BREAKS)


class Physical:
    """Maps (YAML line, column) to (physical line, column) for one text."""

    def __init__(self, text: str) -> None:
        self.lines = PHYSICAL_BREAK().split(text)
        self._map: list[tuple[int, int]] = []  # per YAML line: (physical line, column offset)
        line, offset = 1, 0
        pos = 0
        for m in LINE_BREAK().finditer(text):
            self._map.append((line, offset))
            if m.group(0) in ("\n", "\r", "\r\n"):
                line, offset = line + 1, 0
            else:
                offset += m.end() - pos
            pos = m.end()
        self._map.append((line, offset))

    def _point(self, line: int, column: int) -> tuple[int, int]:
        if not 1 <= line <= len(self._map):
            return line, column
        phys, offset = self._map[line - 1]
        return phys, column + offset

    def where(self, w: Location) -> Location:
        line, column = self._point(w.line, w.column)
        end_line, end_column = w.end_line, w.end_column
        if end_line is not None:
            end_line, end_col = self._point(end_line, end_column or 1)
            end_column = end_col if end_column is not None else None
        return Location(w.file, line, column, end_line, end_column)

    def move(self, f: Finding, path: str) -> None:
        """Put the finding and its fixes' edits on physical lines (what `--fix`, SARIF fixes and
        reviewdog suggestions apply: kvlint/fix/apply.py counts physical lines)."""
        if f.where.file == path:
            f.where = self.where(f.where)
        f.fixes = tuple(
            replace(x, edits=tuple(replace(e, where=self.where(e.where)) for e in x.edits)) for x in f.fixes
        )
