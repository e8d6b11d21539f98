"""One line of a shell script split into words, as `shlex.shlex(line, posix=True,
punctuation_chars=";&|")` with `whitespace_split = True` and `commenters = "#"` splits it, by
regular expressions instead of shlex's character-at-a-time loop (a 1 MB script line took shlex
about half a second; the expressions take a tenth of that).

The rules are shlex's own (CPython Lib/shlex.py, `read_token`, 3.8+): words end at space, tab,
CR or LF, and at a run of `;&|` (itself a word); `#` between words or right after one ends the
line; outside quotes a backslash keeps the next character; inside single quotes everything is
literal; inside double quotes a backslash keeps a following `"` or backslash alone and any other
character with the backslash; `""` is an empty word. A line shlex refuses (an open quote, a
trailing backslash) is given to shlex itself, so its error is the one callers see.
"""

from __future__ import annotations

from kvlint.lazy_re import lazy

_PLAIN = r"[^ \t\r\n'\"\\#;&|]+"
_ESCAPED = r"\\[\s\S]"
_SINGLE = r"'[^']*'"
_DOUBLE = r'"(?:[^"\\]|\\[\s\S])*"'
_WORD = lazy(rf"(?:{_PLAIN}|{_ESCAPED}|{_SINGLE}|{_DOUBLE})+")
_PIECE = lazy(rf"({_PLAIN})|\\([\s\S])|'([^']*)'|\"((?:[^\"\\]|\\[\s\S])*)\"")
_IN_DOUBLE = lazy(r'\\(["\\])')
_GAP = lazy(r"[ \t\r\n]*")
_PUNCT = lazy(r"[;&|]+")


def _unquote(word: str) -> str:
    if "\\" not in word and "'" not in word and '"' not in word:
        return word
    out = []
    for m in _PIECE().finditer(word):
        plain, escaped, single, double = m.groups()
        if plain is not None:
            out.append(plain)
        elif escaped is not None:
            out.append(escaped)
        elif single is not None:
            out.append(single)
        else:
            out.append(_IN_DOUBLE().sub(r"\1", double))
    return "".join(out)


def _shlex(line: str) -> list[str]:
    import shlex  # only for a line the expressions cannot split: its error is the one callers see

    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def split_line(line: str) -> list[str]:
    """The words of one script line; raises ValueError where shlex does."""
    words: list[str] = []
    at, end = 0, len(line)
    gap, word, punct = _GAP(), _WORD(), _PUNCT()
    while True:
        at = gap.match(line, at).end()  # type: ignore[union-attr]  # matches the empty string
        if at >= end or line[at] == "#":
            return words
        m = word.match(line, at) or punct.match(line, at)
        if m is None:  # an open quote or a trailing backslash: shlex's own error
            return _shlex(line)
        if m.re is word:
            words.append(_unquote(m.group()))
        else:
            words.append(m.group())
        at = m.end()
