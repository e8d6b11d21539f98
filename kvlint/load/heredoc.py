"""Here-documents of a shell script: the YAML a script pipes to `kubectl apply -f -` or `eksctl create
cluster -f -` (`cat <<EOF | kubectl apply -f -`), each given back with the line it starts on so that
what is read from it is located in the script.

The grammar read is POSIX sh's (XCU 2.7.4 "Here-Document"): `<<WORD` or `<<-WORD` (tabs stripped from
the body's lines and the delimiter's), WORD possibly quoted ('EOF', "EOF"); the body runs from the
line after the operator to the first line that is WORD alone. A here-string (`<<<`) is not one. The
body is given as written: a shell expansion in it (`${CLUSTER_NAME}`) stays text. One operator per
line is read (the first); an unterminated body runs to the end of the script, as sh reads it.
"""

from __future__ import annotations

import re

_OPERATOR = re.compile(r"(?<!<)<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
BODIES_MAX = 256  # here-documents read from one script


def heredocs(text: str) -> list[tuple[int, str]]:
    """(0-based line the body starts on, body) of each here-document of the script."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines) and len(out) < BODIES_MAX:
        m = _OPERATOR.search(_code(lines[i]))
        i += 1
        if m is None:
            continue
        tabs, word = m.group(1) == "-", m.group(3)
        start = i
        while i < len(lines) and (lines[i].lstrip("\t") if tabs else lines[i]) != word:
            i += 1
        body = lines[start:i]
        out.append((start, "\n".join(s.lstrip("\t") for s in body) if tabs else "\n".join(body)))
        i += 1  # the delimiter line
    return out


def _code(line: str) -> str:
    """The line without a trailing comment (a `#` that starts a word)."""
    m = re.search(r"(^|\s)#", line)
    return line[: m.start()] if m else line
