"""docker compose's variables: `${VAR}` interpolation and the `.env` / `env_file` files, read as compose reads them.

Interpolation (docker/docs content/reference/compose-file/interpolation.md @9f02705; compose-spec/compose-go
template/template.go @1ce62c3e, the code `docker compose` runs):
- `$VAR` and `${VAR}` are the variable's value; a name is `[_a-zA-Z][_a-zA-Z0-9]*`; a `$` followed by
  anything else is kept as written;
- `${VAR:-default}`: the default when VAR is unset or empty; `${VAR-default}`: only when unset;
- `${VAR:?err}` / `${VAR?err}`: compose refuses the file when VAR is unset or empty / unset;
- `${VAR:+alt}` / `${VAR+alt}`: `alt` when VAR is set and not empty / set, else empty;
- defaults, errors and alternatives are interpolated too (nesting, `${A:-${B:-x}}`); `$$` is a literal `$`.
Compose takes the values from the shell's environment, then the project directory's `.env` (the shell's
value wins). kvlint must give the same answer on every machine, so it reads the file as compose does on a
machine whose shell sets none of the variables: a variable the `.env` beside the file sets is that value;
one it does not set takes the default the file writes; one with no default is unknown — a placeholder,
named as such, never a guess and never the linting machine's own environment.

The `.env` and `env_file` syntax (docker/docs content/compose/environment-variables/env-file.md): `#` lines and
blank lines are skipped, `export ` may lead, `VAR=VAL`; an unquoted value ends at ` #` and is trimmed,
a double-quoted one takes `\\n \\t \\r \\\\ \\"` escapes, both are interpolated; a single-quoted one is literal;
`VAR` alone takes the shell's value (unknown here).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kvlint.record import field, record

_NAME = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_OPS = (":-", "-", ":?", "?", ":+", "+")
VALUE_CHARS_MAX = 64 * 1024  # one interpolated value: nesting or defaults cannot grow it past this
LINES_MAX = 10_000  # lines of one env file read


def placeholder(name: str) -> str:
    """What an unknown variable becomes in the text: `$(NAME)`, the form the argument reader reports
    as a variable whose value is unknown (extract/pod/argv.py expand)."""
    return f"$({name})"


@record
class Interpolated:
    text: str
    unknown: list[str] = field(default_factory=list)  # variables no file sets and no default covers
    required: list[str] = field(default_factory=list)  # of them, those `:?` / `?` makes compose require


def interpolate(text: str, lookup: Callable[[str], str | None], depth: int = 0) -> Interpolated:
    """`text` with its variables filled (module docstring); `lookup(name)`: the value a file sets, or None."""
    out = Interpolated("")
    parts: list[str] = []
    i, n = 0, len(text)
    while i < n:
        at = text.find("$", i)
        if at < 0:
            parts.append(text[i:])
            break
        parts.append(text[i:at])
        if text.startswith("$$", at):
            parts.append("$")
            i = at + 2
            continue
        if text.startswith("${", at):
            close = _closing(text, at)
            if close < 0 or depth > 8:
                parts.append(text[at:])
                break
            parts.append(_braced(text[at + 2 : close], lookup, out, depth))
            i = close + 1
            continue
        m = _NAME.match(text, at + 1)
        if m is None:
            parts.append("$")
            i = at + 1
            continue
        parts.append(_value(m.group(0), lookup, out))
        i = m.end()
    out.text = "".join(parts)[:VALUE_CHARS_MAX]
    return out


def _closing(text: str, at: int) -> int:
    """The `}` that closes the `${` at `at` (nested `${...}` counted, as compose-go's getFirstBraceClosingIndex)."""
    depth, i = 0, at
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _value(name: str, lookup: Callable[[str], str | None], out: Interpolated) -> str:
    value = lookup(name)
    if value is not None:
        return value
    if name not in out.unknown:
        out.unknown.append(name)
    return placeholder(name)


def _braced(inner: str, lookup: Callable[[str], str | None], out: Interpolated, depth: int) -> str:
    m = _NAME.match(inner)
    if m is None:  # `${1}`, `${}`: compose refuses the template; kvlint keeps it as written
        return "${" + inner + "}"
    name, rest = m.group(0), inner[m.end() :]
    if not rest:
        return _value(name, lookup, out)
    op = next((o for o in _OPS if rest.startswith(o)), None)
    if op is None:  # `${VAR/a/b}` and other shell forms compose does not support
        return "${" + inner + "}"
    arg = rest[len(op) :]
    value = lookup(name)
    empty_counts = op.startswith(":")
    is_set = value is not None and (value != "" or not empty_counts)
    if op in (":-", "-"):
        return value if is_set and value is not None else _nested(arg, lookup, out, depth)
    if op in (":+", "+"):
        if value is None:
            return _value(name, lookup, out)
        return _nested(arg, lookup, out, depth) if is_set else ""
    if is_set and value is not None:  # `:?` / `?` met
        return value
    if name not in out.required:
        out.required.append(name)
    return _value(name, lambda _n: None, out)


def _nested(arg: str, lookup: Callable[[str], str | None], out: Interpolated, depth: int) -> str:
    inner = interpolate(arg, lookup, depth + 1)
    out.unknown.extend(u for u in inner.unknown if u not in out.unknown)
    out.required.extend(r for r in inner.required if r not in out.required)
    return inner.text


# ---- env files


@record
class EnvFile:
    values: dict[str, str] = field(default_factory=dict)  # what the file sets
    unknown: dict[str, list[str]] = field(
        default_factory=dict
    )  # names set from the shell: the variables they use


def parse_env_file(text: str, outer: Callable[[str], str | None] = lambda _n: None) -> EnvFile:
    """The variables one env file sets; a value is interpolated with the file's earlier lines, then `outer`."""
    out = EnvFile()

    def lookup(name: str) -> str | None:
        return out.values[name] if name in out.values else outer(name)

    lines = text.splitlines()[:LINES_MAX]
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, eq, raw = line.partition("=")
        key = key.strip()
        if not _NAME.fullmatch(key):
            continue
        if not eq:  # `VAR` alone: the shell's value
            out.unknown[key] = [key]
            continue
        raw = raw.lstrip()
        if raw[:1] == '"' and not _closes(raw, '"'):  # a double-quoted value over several lines
            while i < len(lines) and not _closes(raw, '"'):
                raw += "\n" + lines[i]
                i += 1
        _assign(out, key, raw, lookup)
    return out


def _closes(raw: str, quote: str) -> bool:
    j = 1
    while j < len(raw):
        if raw[j] == "\\":
            j += 2
            continue
        if raw[j] == quote:
            return True
        j += 1
    return False


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


def _assign(out: EnvFile, key: str, raw: str, lookup: Callable[[str], str | None]) -> None:
    if raw[:1] == "'":
        end = raw.find("'", 1)
        out.values[key] = (raw[1:end] if end > 0 else raw[1:]).replace("\\'", "'")
        out.unknown.pop(key, None)
        return
    if raw[:1] == '"':
        body, j = [], 1
        while j < len(raw) and raw[j] != '"':
            if raw[j] == "\\" and j + 1 < len(raw):
                body.append(_ESCAPES.get(raw[j + 1], "\\" + raw[j + 1]))
                j += 2
                continue
            body.append(raw[j])
            j += 1
        value = "".join(body)
    else:
        value = re.split(r"\s+#", raw, maxsplit=1)[0].strip()
    filled = interpolate(value, lookup)
    if filled.unknown:
        out.unknown[key] = filled.unknown
        out.values.pop(key, None)
        return
    out.values[key] = filled.text
    out.unknown.pop(key, None)
