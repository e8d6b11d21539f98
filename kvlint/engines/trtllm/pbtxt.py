"""A bounded reader of protobuf text format, as Triton writes a model's configuration (config.pbtxt).

Triton parses config.pbtxt with protobuf's TextFormat into its ModelConfig message
(triton-inference-server/common protobuf/model_config.proto); kvlint reads the same grammar without
protobuf: `name: value`, `name { … }` / `name: { … }` / `name < … >`, lists `name: [a, b]`, strings in double
or single quotes (adjacent ones join, C escapes), numbers, identifiers (enum values, true/false), `#`
comments, `,` or `;` between fields. tensorrtllm_backend ships its configs as templates that
tools/fill_template.py fills with Python's string.Template: an unfilled `${name}` (quoted or not) is kept
as a placeholder, never read as a value.

Bounded (security review 3, S-series style): at most MAX_BYTES of text, MAX_DEPTH nested messages,
MAX_FIELDS fields in all; anything else, or text that is not this grammar, is one `PbtxtError` at its
line and column, never a traceback.
"""

from __future__ import annotations

import re

from kvlint.record import record

MAX_BYTES = 1024 * 1024  # tensorrtllm_backend's largest template (tensorrt_llm/config.pbtxt) is ~20 KB
MAX_DEPTH = 32  # ModelConfig nests about 4 deep (parameters { value { string_value } })
MAX_FIELDS = 50_000

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\n\f\v]+|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<placeholder>\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)[fFuUlL]?)
  | (?P<ident>-?[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>[{}\[\]<>:,;])
    """,
    re.VERBOSE,
)
# a fill_template placeholder string.Template leaves when no value is given for it
PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_CLOSE = {"{": "}", "<": ">"}


class PbtxtError(Exception):
    """Text that is not protobuf text format (or exceeds a bound), at a 1-based line and column."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


@record(frozen=True)
class Scalar:
    """A value as written: `text` is a string's decoded content or the token itself (42, KIND_GPU, ${x})."""

    text: str
    quoted: bool
    line: int
    column: int
    end_column: int

    @property
    def unfilled(self) -> bool:
        """A template placeholder fill_template was not given a value for (`${engine_dir}`)."""
        return PLACEHOLDER.search(self.text) is not None


@record(frozen=True)
class Field:
    name: str
    value: Scalar | Message | tuple[Scalar | Message, ...]
    line: int
    column: int


@record(frozen=True)
class Message:
    fields: tuple[Field, ...]

    def all(self, name: str) -> list[Scalar | Message]:
        """Every value of a field (a repeated field may be written once per value, or as a list)."""
        out: list[Scalar | Message] = []
        for f in self.fields:
            if f.name == name:
                out.extend(f.value if isinstance(f.value, tuple) else (f.value,))
        return out

    def scalar(self, name: str) -> Scalar | None:
        """The last scalar value of a field (protobuf keeps the last of a singular field written twice)."""
        found = [v for v in self.all(name) if isinstance(v, Scalar)]
        return found[-1] if found else None

    def message(self, name: str) -> Message | None:
        found = [v for v in self.all(name) if isinstance(v, Message)]
        return found[-1] if found else None


@record
class _Tok:
    kind: str
    text: str
    line: int
    column: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    line, start, i = 1, 0, 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            what = (
                "a string not closed on its line" if text[i] in "\"'" else f"unexpected character {text[i]!r}"
            )
            raise PbtxtError(what, line, i - start + 1)
        kind = m.lastgroup or ""
        if kind != "space":
            out.append(_Tok(kind, m.group(), line, i - start + 1))
        newlines = m.group().count("\n")
        if newlines:
            line += newlines
            start = m.start() + m.group().rindex("\n") + 1
        i = m.end()
    return out


def _unquote(tok: _Tok) -> str:
    body, out, i = tok.text[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in "xX":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
            if digits is None:
                raise PbtxtError("\\x with no hex digits in a string", tok.line, tok.column + i + 1)
            out.append(chr(int(digits.group(), 16)))
            i += 2 + len(digits.group())
        elif nxt.isdigit():
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
            if digits is None:
                raise PbtxtError("a bad octal escape in a string", tok.line, tok.column + i + 1)
            out.append(chr(int(digits.group(), 8)))
            i += 1 + len(digits.group())
        else:  # \" \' \\ \? and protobuf's other single-character escapes stand for themselves
            out.append(nxt)
            i += 2
    return "".join(out)


class _Parser:
    def __init__(self, tokens: list[_Tok], end: tuple[int, int]) -> None:
        self.toks, self.i, self.end, self.count = tokens, 0, end, 0

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise PbtxtError("the text ends inside a message or value", *self.end)
        self.i += 1
        return tok

    def expect(self, text: str) -> _Tok:
        tok = self.take()
        if tok.text != text:
            raise PbtxtError(f"expected {text!r}, found {tok.text[:40]!r}", tok.line, tok.column)
        return tok

    def message(self, close: str | None, depth: int) -> Message:
        if depth > MAX_DEPTH:
            tok = self.peek()
            where = (tok.line, tok.column) if tok else self.end
            raise PbtxtError(f"messages nested deeper than {MAX_DEPTH}", *where)
        fields: list[Field] = []
        while True:
            tok = self.peek()
            if tok is None or tok.text == close:
                if tok is None and close is not None:
                    raise PbtxtError(f"the text ends before {close!r}", *self.end)
                if tok is not None:
                    self.i += 1
                return Message(tuple(fields))
            fields.append(self.field(depth))
            nxt = self.peek()
            if nxt is not None and nxt.text in ",;":
                self.i += 1

    def field(self, depth: int) -> Field:
        name = self.take()
        if name.kind != "ident" or name.text.startswith("-"):
            raise PbtxtError(f"expected a field name, found {name.text[:40]!r}", name.line, name.column)
        self.count += 1
        if self.count > MAX_FIELDS:
            raise PbtxtError(f"more than {MAX_FIELDS:,} fields", name.line, name.column)
        nxt = self.peek()
        colon = nxt is not None and nxt.text == ":"
        if colon:
            self.i += 1
            nxt = self.peek()
        if nxt is not None and nxt.text in _CLOSE:
            self.i += 1
            value: Scalar | Message | tuple[Scalar | Message, ...] = self.message(_CLOSE[nxt.text], depth + 1)
        elif nxt is not None and nxt.text == "[":  # a list of messages may omit the colon (`input [ … ]`)
            self.i += 1
            value = self.listed(depth)
        elif not colon:
            where = (nxt.line, nxt.column) if nxt else self.end
            raise PbtxtError(f"expected ':' or '{{' after {name.text!r}", *where)
        else:
            value = self.scalar()
        return Field(name.text, value, name.line, name.column)

    def listed(self, depth: int) -> tuple[Scalar | Message, ...]:
        items: list[Scalar | Message] = []
        while True:
            tok = self.peek()
            if tok is not None and tok.text == "]":
                self.i += 1
                return tuple(items)
            if tok is not None and tok.text in _CLOSE:
                self.i += 1
                items.append(self.message(_CLOSE[tok.text], depth + 1))
            else:
                items.append(self.scalar())
            tok = self.peek()
            if tok is not None and tok.text == ",":
                self.i += 1
            elif tok is None or tok.text != "]":
                where = (tok.line, tok.column) if tok else self.end
                raise PbtxtError("expected ',' or ']' in a list", *where)

    def scalar(self) -> Scalar:
        tok = self.take()
        if tok.kind == "string":
            parts, last = [_unquote(tok)], tok
            while (nxt := self.peek()) is not None and nxt.kind == "string" and nxt.line == last.line:
                parts.append(_unquote(self.take()))
                last = nxt
            end = last.column + len(last.text) if last.line == tok.line else tok.column + len(tok.text)
            return Scalar("".join(parts), True, tok.line, tok.column, end)
        if tok.kind in ("number", "ident", "placeholder"):
            return Scalar(tok.text, False, tok.line, tok.column, tok.column + len(tok.text))
        raise PbtxtError(f"expected a value, found {tok.text[:40]!r}", tok.line, tok.column)


def parse(text: str) -> Message:
    """The message `text` writes; PbtxtError (located) for text beyond the bounds or not in the grammar."""
    if len(text) > MAX_BYTES:
        raise PbtxtError(f"larger than {MAX_BYTES:,} bytes", 1, 1)
    lines = text.split("\n")
    end = (len(lines), len(lines[-1]) + 1)
    parser = _Parser(_tokens(text), end)
    return parser.message(None, 0)
