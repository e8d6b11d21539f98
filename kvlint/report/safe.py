"""Text from input made safe for the format it is written in (security review F10, F15-F17, F29).

Everything a report or a diagnostic prints may come from the file being linted or its name: a
`metadata.name`, an option, a model id, a path, an exception text. Each format gets one function,
applied where the format writes a string, so no input can act as markup or as a command there:

- `plain`: terminals and CI logs (text, concise, github, stderr). C0/C1 control characters (ESC,
  CR, LF, BEL …), DEL, Unicode line and paragraph separators, bidi overrides and BOM become
  visible escapes (`\\x1b`, `\\n`, `\\u202e`), so no input can move the cursor, set a title, clear
  the screen or start a line — a line that starts with `::` is a GitHub workflow command. `##[`
  (the runner's older command syntax, read anywhere in a line) is written `#\x23[`.
- `path`: `plain`, and a path starting with `:` after any whitespace (which `:LINE` after it would
  turn into `::`; the runner trims leading whitespace, NBSP and U+3000 included) is written `./…`.
- `runner_lines`: a whole block of text (a report, a diagnostic, a diff) made inert for the GitHub
  runner's log parser: a line that starts with `::` after whitespace gets its first `:` written
  `\x3a`, and every `##[` becomes `#\x23[`. Every line-based format and every stderr line passes
  through it; the fix output can use it too.
- `markdown`: `plain`'s line breaks become spaces, `& < >` are HTML-escaped and Markdown's
  punctuation is backslash-escaped, so a cell cannot close its table, open a code block, a link,
  an image or raw HTML; GitHub's autolinks (`https://`, `www.`), `@` mentions and `#N` references
  are broken by a zero-width space (U+200B), so untrusted text posted as a PR comment neither
  links nor notifies anyone; `mermaid` keeps a conservative character set for chart titles.
- `data`: JSON and SARIF escape everything themselves; only lone surrogates (which strict JSON
  parsers reject) become U+FFFD.
- `uri`: a SARIF artifact URI, percent-encoded from the path's bytes (`#`, `?`, `%`, spaces, and
  names that are not UTF-8).

Every function also caps the length (`LIMIT`), saying how much was cut.
"""

from __future__ import annotations

import re

from kvlint.lazy_re import lazy

LIMIT = 2000  # characters of one input-derived string in a report (a message is far shorter)

_SURROGATE = lazy("[\ud800-\udfff]")
_CONTROL = lazy("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MD_SPECIAL = lazy(r"([\\`*_\[\]|~])")  # backslash, emphasis, code, links, tables, strikethrough
_V1_COMMAND = "##["  # the runner's `##[cmd]` syntax: found anywhere in a line (ActionCommand.TryParse)
_V1_ESCAPED = "#\\x23["
_LINE_COMMAND = lazy(r"^([^\S\n]*):(?=:)", re.MULTILINE)  # TryParseV2 trims leading whitespace first
_ZWSP = "\u200b"
# GFM autolinks (scheme://, www., mailto:/xmpp:), @mentions (users, org/team, e-mail), #N and GH-N
_MD_LINKING = lazy(
    r"(?i)(?<=\w)(?=://)|(?<=\bwww)(?=\.)|(?<=\bmailto)(?=:)|(?<=\bxmpp)(?=:)"
    r"|(?<=@)(?=\w)|(?<=#)(?=\d)|(?<=\bgh)(?=-\d)"
)
_MERMAID_UNSAFE = lazy(r"[^\w .,/:+=@()×-]")


def cap(text: str, limit: int = LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def data(text: str, limit: int = LIMIT) -> str:
    out = cap(text, limit)
    return out if out.isascii() else _SURROGATE().sub("\ufffd", out)


def _escape(m: re.Match) -> str:
    ch = m.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: str, limit: int = LIMIT) -> str:
    out = data(str(text), limit)
    if not (out.isascii() and out.isprintable()):  # printable ASCII holds no character _CONTROL matches
        out = _CONTROL().sub(_escape, out)
    return out.replace(_V1_COMMAND, _V1_ESCAPED)


def path(text: str) -> str:
    out = plain(text)
    # ":" + ":12:3" would start a line with "::"; so would " ::x" once the runner trims the space
    return "./" + out if out.lstrip().startswith(":") else out


def runner_lines(text: str) -> str:
    """`text` with no line the GitHub runner reads as a workflow command: a line that starts with
    `::` (after whitespace) has its first colon written `\\x3a`, and `##[` becomes `#\\x23[`.
    Text without either comes back unchanged (the same object)."""
    if "::" not in text and _V1_COMMAND not in text:
        return text
    return _LINE_COMMAND().sub(r"\1\\x3a", text).replace(_V1_COMMAND, _V1_ESCAPED)


def json_text(text: str) -> str:
    """A JSON document (JSON, SARIF, rdjson) with every `##[` written `##\\u005b`: the same data
    to a JSON parser, and nothing the runner's `##[cmd]` parser reads. (`##[` can only occur
    inside a string there, and no JSON escape ends in `#`.)"""
    return text.replace(_V1_COMMAND, "##\\u005b")


def markdown(text: object, limit: int = LIMIT) -> str:
    out = _CONTROL().sub(" ", data(str(text), limit))
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_LINKING().sub(_ZWSP, _MD_SPECIAL().sub(r"\\\1", out))


def mermaid(text: str, limit: int = 200) -> str:
    """Text for a mermaid label: only characters its syntax takes as text, and no autolink, mention or
    reference left whole (the markdown report's link-breaking, security review 3 S13, applied after)."""
    return _MD_LINKING().sub(_ZWSP, _MERMAID_UNSAFE().sub("_", data(text, limit)))


def uri(file: str) -> str:
    from urllib.parse import quote

    try:  # a name read from disk that is not UTF-8 carries its bytes as surrogateescape characters
        raw = file.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # any other lone surrogate (a YAML escape, --stdin-filename)
        raw = data(file).encode("utf-8")
    return quote(raw, safe="/-._~")


def scrub(obj: object) -> object:
    """A JSON document with every string passed through `data` (keys included)."""
    if isinstance(obj, str):
        return data(obj)
    if isinstance(obj, dict):
        return {scrub(k): scrub(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [scrub(v) for v in obj]
    return obj


def _plain_finding(f):
    from kvlint.record import replace

    return replace(
        f,
        message=plain(f.message),
        details=tuple(plain(d) for d in f.details),
        fix=plain(f.fix) if f.fix else f.fix,
        deployment=plain(f.deployment) if f.deployment else f.deployment,
        suppressed_by=plain(f.suppressed_by) if f.suppressed_by else f.suppressed_by,
        where=replace(f.where, file=path(f.where.file)),
    )


def plain_run(run):
    """A copy of a RunResult for the line-based formats (text, concise, github): every message,
    detail, fix, path and error neutralised with `plain`. Source lines stay as read (the text
    report escapes them itself, keeping the caret under the value)."""
    from kvlint.record import replace

    files = [
        replace(
            r,
            path=path(r.path),
            findings=[_plain_finding(f) for f in r.findings],
            suppressed=[_plain_finding(f) for f in r.suppressed],
        )
        for r in run.files
    ]
    return replace(run, files=files, errors=[plain(e) for e in run.errors])
