"""The shipped catalog file (data/models.json), read so that a look-up pays for the one architecture it needs.

benchmarks/build_catalog.py writes one architecture per line under "archs" (`  "key": {...},`). Those configs hold
most of the file's objects, and a run looks up a few of them, so `read()` parses the rest of the file as JSON and
keeps each architecture's line as text; `config()` decodes one on first use and keeps it. A file not in that
layout (edited by hand) is read whole as JSON, with the same result. The configs' text is not even copied until
used. This took the first look-up in a fresh interpreter from 6.7 to 4.1 ms of CPU on the development machine
(`python benchmarks/catalog_bench.py` prints it).
"""

from __future__ import annotations

import json
from typing import Any

_OPEN = '"archs": {\n'
_CLOSE = '\n},\n"models": '
_DECODER = json.JSONDecoder()


def read(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The catalog without its architectures, and the architectures by key (undecoded until used)."""
    with open(path, "rb") as fh:  # bytes, decoded once: no newline translation pass
        text = fh.read().decode("utf-8")
    start = text.find(_OPEN)
    end = text.find(_CLOSE, start) if start >= 0 else -1
    if end >= 0:
        try:
            archs = _spans(text, start + len(_OPEN), end)
            rows, stop = _DECODER.raw_decode(text, end + len(_CLOSE))  # parsed in place: no copy of the text
            head = json.loads(text[:start].rstrip().removesuffix(",") + "}")
        except ValueError:
            pass  # not the generated layout: read it whole below
        else:
            if isinstance(head, dict) and isinstance(rows, list) and text[stop:].strip() == "}":
                return dict(head, models=rows), archs
    data = json.loads(text)
    return data, dict(data.get("archs", {}))


def _spans(text: str, pos: int, end: int) -> dict[str, Any]:
    """`  "key": {...},` lines between pos and end: key -> (text, first, last) of its config, not copied.
    A key is a plain string (no quote or escape), as the builder writes it."""
    out: dict[str, Any] = {}
    while pos < end:
        stop = text.find("\n", pos, end)
        stop = end if stop < 0 else stop
        last = stop - 1 if text[stop - 1] == "," else stop
        quote = text.find('"', pos, stop)
        close = text.find('": ', quote + 1, stop)
        key = text[quote + 1 : close] if 0 <= quote < close else ""
        first = close + 3
        if not key or "\\" in key or '"' in key or text[first] != "{" or text[last - 1] != "}":
            raise ValueError(f"not an architecture line at offset {pos}")
        out[key] = (text, first, last)
        pos = stop + 1
    return out


def config(archs: dict[str, Any], key: str) -> dict[str, Any]:
    """One architecture's compact config, decoded on first use."""
    value = archs[key]
    if isinstance(value, tuple):
        text, first, last = value
        value = json.loads(text[first:last])
        archs[key] = value
    return value  # type: ignore[no-any-return]
