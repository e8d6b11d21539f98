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
from kvlint.fix.tokens import BLOCK_MAP, BLOCK_SEQ, FLOW_SEQ, ScalarToken, Tokens
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

    def __init__(self, text: str, breaks: re.Pattern[str] | None = None) -> None:
        self.text = text
        self._tokens: Tokens | None = None
        self.starts = [0]
        self.breaks: list[str] = []
        for m in (breaks or LINE_BREAK()).finditer(text):
            self.breaks.append(m.group(0))
            self.starts.append(m.end())

    def __len__(self) -> int:
        return len(self.starts)

    def tokens(self) -> Tokens:
        """The text's scalars with their exact source spans (parsed once, on first use)."""
        if self._tokens is None:
            self._tokens = Tokens(self.text, self.starts)
        return self._tokens

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


class _Refused(Exception):
    """An edit that cannot be placed exactly; the reason becomes the display-only fix's note."""


def _holding(src: SourceLines, start: int, end: int) -> ScalarToken:
    tokens = src.tokens()
    tok = tokens.holding(start, end) if tokens.ok else None
    if tok is None:
        raise _Refused("")
    why = tokens.literal(tok, start, end)
    if why:
        raise _Refused(why)
    return tok


def _replacement(edit: Edit, src: SourceLines) -> Edit | None:
    w = edit.where
    start = src.offset(w.line, w.column)
    end = src.offset(w.end_line, w.end_column)
    if start is None or end is None or end < start or w.end_line != w.line:
        return None
    old = src.text[start:end]
    if not edit.text and old.startswith("#"):
        return _comment_removal(src, w, start, end)
    if _in_template(src, start, end):
        return None
    tokens = src.tokens()
    whole = tokens.holding(start, end) if tokens.ok else None
    if whole is None:  # the span holds more than one value, or none
        return None
    if (start, end) == (whole.start, whole.end) and not whole.decorated:
        start, end = whole.content  # a quoted value's characters, without its quotes
    tok = _holding(src, start, end)
    if not _writable(edit.text, tok, whole=(start, end) == tok.content):
        return None
    return Edit(_loc(src, w.file, start, end), edit.text, reads=edit.reads)


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./=+-]+")


def _writable(text: str, tok: ScalarToken, whole: bool) -> bool:
    """The new text can stand where it goes in that scalar's style, reading as written."""
    if tok.style == '"':
        return "\\" not in text and '"' not in text
    if tok.style == "'":
        return "'" not in text
    if tok.style in ("|", ">"):
        return "\n" not in text and "\r" not in text
    if not whole:
        return _PLAIN_WORD.fullmatch(text) is not None or not text
    return _PLAIN_WORD.fullmatch(text) is not None


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
    """New words after the item `edit.where` spans, where the grammar of its parent takes them: a
    new item of its sequence (flow or block), a new key of its block mapping, or new words of the
    shell command line it is the last word of."""
    w = edit.where
    found = _scalar_spanned(src, w)
    if found is None:
        return None
    tok, start, end = found
    if (start, end) != tok.content:
        return _in_string(edit, src, _holding(src, start, end), w, start, end)
    if tok.parent == FLOW_SEQ:
        quote = tok.style if tok.style in _QUOTES else ""
        words = _flag_words(edit.append, src.text[max(0, tok.start - 2000) : tok.end])
        text = "".join(", " + _quoted(word, quote) for word in words)
        return Edit(_loc(src, w.file, tok.end, tok.end), text, reads=edit.reads)
    if not tok.single_line or tok.decorated or not _line_ends_after(src, tok.end):
        return None
    return _next_line(edit, src, tok)


def _scalar_spanned(src: SourceLines, w: Location) -> tuple[ScalarToken, int, int] | None:
    """The scalar token holding the one-line span `w` (outside a template), and the span's offsets: the
    token's content when `w` spans the whole undecorated token; None when there is no such token."""
    last = w.end_line or w.line
    start = src.offset(w.line, w.column)
    end = src.offset(last, w.end_column if w.end_column is not None else w.column)
    if start is None or end is None or last != w.line or _in_template(src, start, end):
        return None
    tok = src.tokens().holding(start, end) if src.tokens().ok else None
    if tok is None:
        return None
    if (start, end) == (tok.start, tok.end) and not tok.decorated:
        start, end = tok.content
    return tok, start, end


def _next_line(edit: Edit, src: SourceLines, tok: ScalarToken) -> Edit | None:
    """New lines after a plain one-line scalar: items of its block sequence written as its own item is
    (dash, indent, quotes), or one new key of its block mapping at its key's indent."""
    w = edit.where
    line_no, col = src.position(tok.start)
    before = src.line(line_no)[: col - 1]
    nl = src.newline()
    at = src.content_end(line_no)
    if tok.parent == BLOCK_SEQ and _BLOCK_ITEM.fullmatch(before):
        quote = tok.style if tok.style in _QUOTES else ""
        neighbours = "\n".join(src.line(n) for n in range(max(1, line_no - 30), line_no + 1))
        text = "".join(nl + before + _quoted(word, quote) for word in _flag_words(edit.append, neighbours))
        return Edit(_loc(src, w.file, at, at), text, reads=edit.reads)
    key = _MAP_KEY.match(src.line(line_no))
    if tok.parent == BLOCK_MAP and not tok.is_key and key is not None and len(edit.append) == 1:
        return Edit(_loc(src, w.file, at, at), nl + key.group(1) + edit.append[0], reads=edit.reads)
    return None


def _line_ends_after(src: SourceLines, offset: int) -> bool:
    """Only blanks and a comment follow `offset` on its line."""
    line_no, _ = src.position(offset)
    rest = src.text[offset : src.content_end(line_no)].strip(" \t")
    return not rest or rest.startswith("#")


_SHELL_WORD = re.compile(r"[A-Za-z0-9_./=+-]+")
_WORD_END = " \t;&|"


def _in_string(
    edit: Edit, src: SourceLines, tok: ScalarToken, w: Location, start: int, end: int
) -> Edit | None:
    """After the last word of a shell command written inside one YAML string: ` --flag value`, at a
    word boundary (before the blanks, `#`, `;`, `&&`, `&` or `|` that follow the word)."""
    if not edit.append or not all(_SHELL_WORD.fullmatch(word) for word in edit.append):
        return None
    lo, hi = tok.content
    before = src.text[start - 1] if start > lo else ""
    after = src.text[end] if end < hi else ""
    if (before and before not in _WORD_END + "\n\r") or (after and after not in _WORD_END + "\n\r"):
        return None  # inside a word, or a word in shell quotes: not a place for new words
    return Edit(_loc(src, w.file, end, end), " " + " ".join(edit.append), reads=edit.reads)


def materialize_fix(fix: Fix, src: SourceLines) -> Fix:
    """The fix with every edit exact, or display-only (no edits) when one cannot be placed; the
    display-only fix says why when the value's writing is the reason (an anchor, escapes)."""
    if not fix.edits or fix.applicability == Applicability.DISPLAY:
        return fix if not fix.edits else replace(fix, edits=())
    concrete: list[Edit] = []
    for edit in fix.edits:
        try:
            made = _append(edit, src) if edit.append else _replacement(edit, src)
        except _Refused as exc:
            note = f" (not applied: {exc})" if str(exc) else ""
            return Fix(fix.message + note, Applicability.DISPLAY, ())
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
