"""A container's command line as located tokens: command + args, `$(VAR)` expanded from the
container's env as Kubernetes does, shell strings (`sh -c "… && vllm serve …"`) split into
commands and words. Every token keeps where its text sits in the file.
"""

from __future__ import annotations

import re

from kvlint.extract.pod.shell_arith import join_arithmetic, substitute_arithmetic
from kvlint.extract.pod.shell_words import split_line
from kvlint.findings import Location
from kvlint.lazy_re import lazy
from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import record

_K8S_VAR = lazy(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_SHELL_VAR = lazy(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
# Expanded text longer than this is not followed (a `$(A)` repeated 20,000 times over a 10 KB
# variable is 200 MB): the token keeps its unexpanded text and is reported as unknown. 64 KiB is
# far beyond any real argument (Kubernetes caps a whole pod's args at 1 MiB with the rest).
EXPANSION_MAX = 1 << 16
OVERSIZE = f"(expansion past {EXPANSION_MAX:,} characters)"
SHELLS = ("sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/env bash", "zsh", "dash")


@record(frozen=True)
class Token:
    text: str
    where: Location | None
    note: str = ""  # e.g. "from env MODEL_ID" when a variable was expanded
    unresolved: tuple[str, ...] = ()  # variables that could not be expanded
    env: str = ""  # the variable reference the whole token was expanded from ("$(MODEL_ID)"; '' when written)


@record
class EnvVar:
    value: str | None  # None when it comes from valueFrom (a secret, a field ref)
    where: Location | None


def read_env(container: Mapping, path: str) -> dict[str, EnvVar]:
    return env_entries(container.seq("env"), path)


def env_entries(seq: Sequence | None, path: str) -> dict[str, EnvVar]:
    """A list of `{name, value}` / `{name, valueFrom}` entries (a container's env, a chart's extraEnv)."""
    env: dict[str, EnvVar] = {}
    for item in seq or ():
        if not isinstance(item, Mapping):
            continue
        name = item.value("name")
        if not isinstance(name, str):
            continue
        node = item.scalar("value")
        if node is not None:
            env[name] = EnvVar("" if node.value is None else str(node.value), node.where(path))
        else:
            env[name] = EnvVar(None, item.where(path))
    return env


def scalar_where(node: Scalar, path: str) -> Location:
    """The text of a one-line scalar, without its quotes. Only when its source is its text (and the
    quotes): a scalar written with escapes (`"\\x2D-…"`), an anchor or a tag has source columns
    that are not its characters' (security review 3, S4 / S5), so it is located at its start alone,
    and no column inside it is computed from the decoded text (nor an edit placed on one)."""
    if node.line != node.end_line or node.text is None:
        return node.where(path)
    file, line, col = node.file or path, node.line + 1, node.col + 1  # node.where()'s, built once
    if node.end_col - node.col != len(node.text) + (2 if node.quoted else 0):
        return Location(file, line, col)
    if node.quoted:
        return Location(file, line, col + 1, line, col + 1 + len(node.text))
    return Location(file, line, col, line, node.end_col + 1)


def _shift(loc: Location, offset: int, length: int) -> Location:
    return Location(loc.file, loc.line, loc.column + offset, loc.line, loc.column + offset + length)


_LOOKAHEAD_LINES = 4  # a shell word sits on the cursor's line or just after it (continuations, folding)
_SLACK = 256  # characters of indentation, quotes and escapes allowed before and inside a word's text


def _scalar_token_where(
    node: Scalar, path: str, lines: list[str], piece: str, start: tuple[int, int]
) -> tuple[Location | None, tuple[int, int]]:
    """Where `piece` sits inside a scalar, searching forward from the cursor `start` (0-based line,
    column) within a bounded window: words come in order, so each search costs O(len(piece))
    and a script of n words costs O(n), whatever text fails to match (it took 49 s for a
    420 KB script when every word searched to the end of the scalar). A word not found there
    is reported at the scalar and the cursor stays put."""
    if node.file is not None and node.file != path:  # read from another file: its lines are not `lines`
        return node.where(path), start
    line_idx, col = start
    if line_idx < node.line:
        line_idx, col = node.line, node.col
    last = min(max(node.end_line, node.line), len(lines) - 1)
    window = 2 * len(piece) + _SLACK
    for idx in range(line_idx, min(line_idx + _LOOKAHEAD_LINES, last + 1)):
        text = lines[idx]
        begin = col if idx == line_idx else 0
        hit = text.find(piece, begin, begin + window) if piece else -1
        if hit >= 0:
            end = hit + len(piece)
            return Location(path, idx + 1, hit + 1, idx + 1, end + 1), (idx, end)
    return node.where(path), (line_idx, col)


def expand(text: str, env: dict[str, EnvVar], shell: bool = False) -> tuple[str, list[str], EnvVar | None]:
    """Expand $(VAR) (and, inside shell scripts, $VAR / ${VAR}); returns (text, unresolved, the
    env var when the whole text was one variable). Expansion stops at EXPANSION_MAX characters:
    the text is then returned unexpanded, with OVERSIZE among the unresolved names."""
    if "$" not in text and len(text) <= EXPANSION_MAX:  # nothing to expand (most words)
        return text, [], None
    unresolved: list[str] = []
    budget = [EXPANSION_MAX - len(text)]
    whole: EnvVar | None = None
    m = _K8S_VAR().fullmatch(text) or (_SHELL_VAR().fullmatch(text) if shell else None)
    if m:
        name = next(g for g in m.groups() if g)
        var = env.get(name)
        if var is not None and var.value is not None:
            whole = var

    def sub(m: re.Match) -> str:
        name = next(g for g in m.groups() if g)
        var = env.get(name)
        if var is None or var.value is None:
            unresolved.append(name)
            return m.group(0)
        budget[0] -= len(var.value)
        return var.value if budget[0] >= 0 else m.group(0)

    out = _K8S_VAR().sub(sub, text)
    if shell:
        out = substitute_arithmetic(out, lambda name: env[name].value if name in env else None, unresolved)
        out = _SHELL_VAR().sub(sub, out)
    if budget[0] < 0:
        return text, [*unresolved, OVERSIZE], None
    return out, unresolved, whole


def _items(node: Node | None) -> list[Scalar]:
    if isinstance(node, Sequence):
        return [n for n in node.items if isinstance(n, Scalar)]
    if isinstance(node, Scalar) and node.value is not None:
        return [node]  # a single string (some charts write args as one string)
    return []


def container_commands(
    container: Mapping, path: str, lines: list[str], env: dict[str, EnvVar]
) -> list[list[Token]]:
    """The commands this container runs, each a list of tokens (usually one command; a shell
    script gives one per `&&`/`;`/newline-separated command)."""
    raw: list[Scalar] = _items(container.get("command")) + _items(container.get("args"))
    if not raw:
        return []
    texts = [str(n.value) for n in raw]
    script_at = _shell_script_index(texts)
    if script_at is None:
        tokens: list[Token] = []
        single_string_args = isinstance(container.get("args"), Scalar)
        for node in raw:
            text = str(node.value)
            if single_string_args and node is container.get("args"):
                tokens.extend(_split_script(node, path, lines, env))
                continue
            value, unresolved, var = expand(text, env)
            if var is not None:
                tokens.append(Token(value, var.where, f"from env {text}", env=text))
            else:
                tokens.append(Token(value, scalar_where(node, path), "", tuple(unresolved)))
        return [tokens]
    script = raw[script_at]
    rest = raw[script_at + 1 :]
    commands = _split_commands(_split_script(script, path, lines, env))
    if rest:  # `sh -c 'script' arg0 arg1 …`: the script's $0 and "$@"
        positional = [Token(str(n.value), scalar_where(n, path)) for n in rest]
        if any(t.text in _POSITIONAL for cmd in commands for t in cmd):
            return [_positional(cmd, positional) for cmd in commands]
        commands.append(positional)
    return commands


_POSITIONAL = ("$@", "$*", "$0")


def _positional(command: list[Token], positional: list[Token]) -> list[Token]:
    """`$0` is the first word after the script, `$@` / `$*` the rest (runtime templates such as
    KServe's pass the InferenceService's args this way)."""
    out: list[Token] = []
    for t in command:
        if t.text == "$0":
            out.extend(positional[:1])
        elif t.text in ("$@", "$*"):
            out.extend(positional[1:])
        else:
            out.append(t)
    return out


def _shell_script_index(texts: list[str]) -> int | None:
    """Index of the script string in `sh -c SCRIPT` / `bash -lc SCRIPT`, if this is a shell."""
    for i, t in enumerate(texts[:3]):
        head = t.strip().split()
        if not head:
            continue
        if head[0] in SHELLS or head[0].endswith(("/sh", "/bash")):
            for j in range(i + 1, min(i + 4, len(texts))):
                if texts[j].startswith("-") and not texts[j].startswith("--") and "c" in texts[j][1:]:
                    k = j + 1
                    if k < len(texts) and texts[k] == "--":  # `bash -lc -- SCRIPT`
                        k += 1
                    return k if k < len(texts) else None
            return None
    return None


_SEPARATORS = {"&&", "||", ";", "|", "&"}


class FileLines(list):
    """This file's lines, and those of files beside it whose nodes a workload uses (a KServe runtime):
    words of a script read from such a file are located in that file's own lines."""

    def __init__(self, lines: list[str], files: dict[str, list[str]]) -> None:
        super().__init__(lines)
        self.files = files


def _split_script(node: Scalar, path: str, lines: list[str], env: dict[str, EnvVar]) -> list[Token]:
    """Shell words of a script scalar, with separators kept as tokens."""
    if node.file is not None and node.file != path:
        lines = lines.files.get(node.file, []) if isinstance(lines, FileLines) else []
        path = node.file
    text = str(node.value)
    text = re.sub(r"\\\n", " ", text)  # line continuations
    out: list[Token] = []
    cursor = (node.line, node.col)
    env = dict(env)  # `export NAME=value` / `NAME=value` lines set variables for the lines after them
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            if out and out[-1].text != ";":
                out.append(Token(";", None))
            continue
        try:
            words = split_line(line)
        except ValueError:
            words = line.split()
        words = join_arithmetic(words)
        _assignments(words, env, node, path, lines, cursor)
        for word in words:
            if word in _SEPARATORS or not word.strip(";&|"):  # only separators (or empty)
                out.append(Token(";", None))
                continue
            where, cursor = _scalar_token_where(node, path, lines, word, cursor)
            value, unresolved, var = expand(word, env, shell=True)
            if var is not None:
                out.append(Token(value, var.where, f"from env {word}", env=word))
            else:
                out.append(Token(value, where, "", tuple(unresolved)))
        out.append(Token(";", None))
    return out


ASSIGN = lazy(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)  # a shell word `NAME=value`


def _assignments(
    words: list[str],
    env: dict[str, EnvVar],
    node: Scalar,
    path: str,
    lines: list[str],
    cursor: tuple[int, int],
) -> None:
    """A shell line that only assigns (`export A=1 B=2`, `A=1`) sets variables for later lines."""
    body = words[1:] if words[:1] == ["export"] else words
    if not body or not all(ASSIGN().match(w) for w in body):
        return
    for word in body:
        m = ASSIGN().match(word)
        assert m is not None
        value, unresolved, _ = expand(m.group(2), env, shell=True)
        where, _ = _scalar_token_where(node, path, lines, word, cursor)
        if not unresolved:
            env[m.group(1)] = EnvVar(value, where)


def _split_commands(tokens: list[Token]) -> list[list[Token]]:
    commands: list[list[Token]] = [[]]
    for t in tokens:
        if t.text == ";" and t.where is None:
            if commands[-1]:
                commands.append([])
        else:
            commands[-1].append(t)
    return [c for c in commands if c]


def flag_name(token: Token) -> str:
    """split_flag's name alone, without building the `=value` token and its location."""
    text = token.text
    return text.split("=", 1)[0] if text.startswith("-") and "=" in text else text


def split_flag(token: Token) -> tuple[str, Token | None]:
    """`--flag=value` -> ("--flag", value token located after the '=')."""
    text = token.text
    if text.startswith("-") and "=" in text:
        name, value = text.split("=", 1)
        where = token.where
        if (
            where is not None
            and where.end_line == where.line
            and where.end_column is not None
            and not token.env
        ):
            # the value's span in the file: what follows `--flag=` in the token's source text, which
            # is not the value's length when `$(VAR)` was expanded inside the token
            span = (where.end_column or where.column) - where.column
            source_len = span - len(name) - 1 if span > len(name) else len(value)
            where = _shift(where, len(name) + 1, max(0, source_len))
        return name, Token(value, where, token.note, token.unresolved, token.env)
    return text, None


def scalar_tokens(seq: Sequence, path: str) -> list[Token]:
    """The scalar items of a YAML list (an `args:` list) as tokens, each at its own position."""
    return [
        Token(str(n.value), scalar_where(n, path))
        for n in seq
        if isinstance(n, Scalar) and n.value is not None
    ]


def option_tokens(entries: list[tuple[str, Scalar]], path: str) -> list[Token]:
    """(option, YAML scalar) pairs -> command-line tokens: `--x value`, or `--x` / `--no-x` for booleans."""
    tokens: list[Token] = []
    for option, node in entries:
        value = node.value
        if isinstance(value, bool):
            tokens.append(Token(option if value else "--no-" + option[2:], scalar_where(node, path)))
        elif value is not None:
            tokens.append(Token(option, scalar_where(node, path)))
            tokens.append(Token(str(value), scalar_where(node, path)))
    return tokens


__all__ = [
    "EnvVar",
    "Token",
    "container_commands",
    "expand",
    "flag_name",
    "option_tokens",
    "read_env",
    "scalar_tokens",
    "split_flag",
]
