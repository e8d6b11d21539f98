"""Turning a finding's edits into exact replacements of the source text, or refusing to.

Rules know where a value sits but not the text around it (they do no I/O); this step, run by
`lint` while the file's text is at hand, checks each edit against that text and makes it concrete:

- a replacement keeps the value's quotes (only the characters between them change);
- an `append` edit becomes an insertion in the style of its neighbours: a new `- item` line with the
  same indentation and quotes in a block sequence, `, item` in a flow sequence, a new `key: value`
  line in a mapping, ` --flag value` inside a shell command string;
- an edit that cannot be placed exactly (no end position, a span outside the text, inside a Helm
  template expression, in a multi-line value) makes its fix display-only: the fix is still shown,
  never applied.
"""

from __future__ import annotations

import re

from kvlint.findings import Applicability, Edit, Finding, Fix, Location
from kvlint.load.source import LINE_BREAK
from kvlint.record import replace

_BLOCK_ITEM = re.compile(r"[ \t]*-[ \t]+")
_MAP_KEY = re.compile(r"([ \t]*)[A-Za-z_][\w.-]*[ \t]*:")
_FLAG_EQ = re.compile(r"--[A-Za-z0-9][\w-]*=")
_QUOTES = "\"'"


class SourceLines:
    """The text with the offset at which each line starts and the break that ends it. Lines are
    the parser's (YAML 1.1 breaks) while edits are made concrete, physical ones once they are
    reported and applied (kvlint/load/source.py says what a line is)."""

    def __init__(self, text: str, breaks: re.Pattern[str] = LINE_BREAK) -> None:
        self.text = text
        self.starts = [0]
        self.breaks: list[str] = []
        for m in breaks.finditer(text):
            self.breaks.append(m.group(0))
            self.starts.append(m.end())

    def __len__(self) -> int:
        return len(self.starts)

    def content_end(self, line: int) -> int:
        """Offset of the end of line `line`'s characters (before its break)."""
        if line < len(self.starts):
            return self.starts[line] - len(self.breaks[line - 1])
        return len(self.text)

    def line(self, line: int) -> str:
        return self.text[self.starts[line - 1] : self.content_end(line)]

    def newline(self) -> str:
        return self.breaks[0] if self.breaks else "\n"

    def offset(self, line: int | None, column: int | None) -> int | None:
        if line is None or column is None or not 1 <= line <= len(self.starts) or column < 1:
            return None
        off = self.starts[line - 1] + column - 1
        return off if off <= self.content_end(line) else None

    def position(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:  # the last line starting at or before offset
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.starts[lo] + 1


def _in_template(src: SourceLines, start: int, end: int) -> bool:
    """True when the span touches a `{{ … }}` expression on its line(s)."""
    line_start = src.text.rfind("\n", 0, start) + 1
    nl = src.text.find("\n", end)
    line_end = len(src.text) if nl < 0 else nl
    before, inside, after = src.text[line_start:start], src.text[start:end], src.text[end:line_end]
    if "{{" in inside or "}}" in inside:
        return True
    return before.rfind("{{") > before.rfind("}}") and "}}" in after


def _loc(src: SourceLines, path: str, start: int, end: int) -> Location:
    line, column = src.position(start)
    end_line, end_column = src.position(end)
    return Location(path, line, column, end_line, end_column)


# plain scalars YAML 1.1 would read as something other than a string (Kubernetes args must be strings)
_NOT_A_STRING = re.compile(
    r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+|0x[0-9a-fA-F]+|\.inf|\.nan)|"
    r"(?i:y|yes|n|no|true|false|on|off|null|~)"
)


def _quoted(word: str, quote: str) -> str:
    if not quote and _NOT_A_STRING.fullmatch(word):
        quote = '"'
    if quote == '"':
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if quote == "'":
        return "'" + word.replace("'", "''") + "'"
    return word


def _replacement(edit: Edit, src: SourceLines) -> Edit | None:
    w = edit.where
    start = src.offset(w.line, w.column)
    end = src.offset(w.end_line, w.end_column)
    if start is None or end is None or end < start or w.end_line != w.line:
        return None
    old = src.text[start:end]
    if not edit.text and old.startswith("#"):
        return _comment_removal(src, w, start, end)
    if len(old) >= 2 and old[0] in _QUOTES and old[-1] == old[0]:
        start, end = start + 1, end - 1
        if old[0] == '"' and ("\\" in edit.text or '"' in edit.text):
            return None
        if old[0] == "'" and "'" in edit.text:
            return None
    if _in_template(src, start, end):
        return None
    return Edit(_loc(src, w.file, start, end), edit.text)


def _comment_removal(src: SourceLines, w: Location, start: int, end: int) -> Edit | None:
    """Delete a comment with the blanks before it; the whole line when nothing else is on it."""
    if end != src.content_end(w.line):
        return None
    line_start = src.starts[w.line - 1]
    while start > line_start and src.text[start - 1] in " \t":
        start -= 1
    if start == line_start:
        end = src.starts[w.line] if w.line < len(src) else end
    return Edit(_loc(src, w.file, start, end), "")


def _flag_words(words: tuple[str, ...], neighbours: str) -> list[str]:
    """`--flag`, `value` as two items, or `--flag=value` as one when the neighbours write it so."""
    if len(words) == 2 and words[0].startswith("--") and _FLAG_EQ.search(neighbours):
        return [f"{words[0]}={words[1]}"]
    return list(words)


def _append(edit: Edit, src: SourceLines) -> Edit | None:
    w = edit.where
    last = w.end_line or w.line
    start = src.offset(w.line, w.column)
    end = src.offset(last, w.end_column if w.end_column is not None else w.column)
    if start is None or end is None or last != w.line:
        return None
    line = src.line(w.line)
    before = line[: w.column - 1]
    nl = src.newline()
    if _in_template(src, start, end):
        return None
    item = _BLOCK_ITEM.match(before)
    if item is not None:
        rest = before[item.end() :]
        if rest not in ("", '"', "'"):
            return _in_string(edit, src, w, end)
        quote = rest
        prefix = before[: item.end()]
        neighbours = "\n".join(src.line(n) for n in range(max(1, w.line - 30), w.line + 1))
        words = _flag_words(edit.append, neighbours)
        text = "".join(nl + prefix + _quoted(word, quote) for word in words)
        at = src.content_end(w.line)
        return Edit(_loc(src, w.file, at, at), text)
    opening = before.rfind("[")
    if opening >= 0 and before.rfind("]") < opening:
        quote = before[-1] if before and before[-1] in _QUOTES else ""
        after = src.text[end : src.content_end(w.line)]
        if quote and not after.startswith(quote):
            return _in_string(edit, src, w, end)
        at = end + len(quote)
        words = _flag_words(edit.append, line)
        text = "".join(", " + _quoted(word, quote) for word in words)
        return Edit(_loc(src, w.file, at, at), text)
    key = _MAP_KEY.match(line)
    if key is not None and len(edit.append) == 1:
        at = src.content_end(w.line)
        return Edit(_loc(src, w.file, at, at), nl + key.group(1) + edit.append[0])
    return _in_string(edit, src, w, end)


def _in_string(edit: Edit, src: SourceLines, w: Location, end: int) -> Edit | None:
    """After the last word of a shell command written inside one YAML string: ` --flag value`."""
    words = " ".join(edit.append)
    if any(c in words for c in "\"'\\#:") or not edit.append:
        return None
    after = src.text[end : end + 1]
    if after and after not in " \t\"'" and not LINE_BREAK.match(after):
        return None
    return Edit(
        Location(w.file, w.line, w.end_column or w.column, w.line, w.end_column or w.column), " " + words
    )


def materialize_fix(fix: Fix, src: SourceLines) -> Fix:
    """The fix with every edit exact, or display-only (no edits) when one cannot be placed."""
    if not fix.edits or fix.applicability == Applicability.DISPLAY:
        return fix if not fix.edits else replace(fix, edits=())
    concrete: list[Edit] = []
    for edit in fix.edits:
        made = _append(edit, src) if edit.append else _replacement(edit, src)
        if made is None:
            return Fix(fix.message, Applicability.DISPLAY, ())
        concrete.append(made)
    return replace(fix, edits=tuple(concrete))


def materialize(findings: list[Finding], text: str, editable: bool) -> None:
    """Make every finding's edits exact against `text`; none at all when the file is not editable
    (a YAML error, an unrendered template, an undecodable file): those fixes stay display-only."""
    src: SourceLines | None = None
    for f in findings:
        if not f.fixes:
            continue
        if not editable:
            f.fixes = tuple(Fix(x.message, Applicability.DISPLAY, ()) for x in f.fixes)
            continue
        if src is None:
            src = SourceLines(text)
        f.fixes = tuple(materialize_fix(x, src) for x in f.fixes)
