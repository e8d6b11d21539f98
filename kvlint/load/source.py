"""Reading a file's bytes into text, refusing what is not a YAML text file, with a located reason."""

from __future__ import annotations

import codecs
import re

from kvlint.codes import INVALID_INPUT
from kvlint.findings import Issue, Location
from kvlint.lazy_re import lazy
from kvlint.record import field, record

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
# What a line is. kvlint reports physical lines: those ended by LF, CRLF or CR (YAML 1.2's line
# breaks, and the only ones editors, git, GitHub annotations and SARIF viewers count).
# ruamel.yaml's marks (YAML 1.1) also end a line at NEL (U+0085), LINE SEPARATOR (U+2028) and
# PARAGRAPH SEPARATOR (U+2029): positions taken from the parser are counted in LINE_BREAK and
# mapped onto physical lines once, in kvlint/load/physical.py. str.splitlines() splits on still more
# (\v, \f, \x1c-\x1e) and is never used on input text.
LINE_BREAK = lazy("\r\n|[\n\r\x85\u2028\u2029]")
PHYSICAL_BREAK = lazy("\r\n|[\n\r]")

_CONFLICT_RE = lazy(r"^(<{7}|>{7})(?: |$)|^={7}$", re.MULTILINE)
# Go-template actions as Helm writes them; Jinja chat templates ({{- bos_token }}) do not match.
_HELM_RE = lazy(
    r"\{\{-?\s*(?:\.[A-Za-z]|\$|include\b|template\b|if\b|else\b|end\b|range\b|with\b|define\b|"
    r"toYaml\b|tpl\b|default\b|required\b|printf\b|quote\b|nindent\b|indent\b|\(|/\*)"
)


@record
class SourceText:
    path: str  # as shown in findings
    text: str
    issues: list[Issue] = field(default_factory=list)
    helm_template: Location | None = None  # the first template action outside a full-line comment
    template_offsets: list[int] = field(default_factory=list)  # each of them, ascending
    _lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            text = self.text  # split as LINE_BREAK splits it; with LF its only break, str.split does that
            only_lf = not any(c in text for c in "\r\x85\u2028\u2029")
            self._lines = text.split("\n") if only_lf else LINE_BREAK().split(text)
        return self._lines


def _line_col_of_offset(data: bytes, offset: int) -> tuple[int, int]:
    """1-based physical line and character column of a byte offset in text that does not decode:
    the text is not kept (nothing is parsed), so nothing maps these positions later."""
    return position(data[:offset].decode("utf-8", "replace"), offset=None, breaks=PHYSICAL_BREAK())


def position(text: str, offset: int | None, breaks: re.Pattern[str] | None = None) -> tuple[int, int]:
    """1-based (line, column) of text[offset] (of the end of `text` when offset is None), counting
    characters and, by default (LINE_BREAK), YAML 1.1's line breaks as ruamel.yaml's marks do (positions in the
    kept text are mapped onto physical lines with the parser's, kvlint/load/physical.py)."""
    before = text if offset is None else text[:offset]
    found = list((breaks or LINE_BREAK()).finditer(before))
    if not found:
        return 1, len(before) + 1
    return len(found) + 1, len(before) - found[-1].end() + 1


def oversized(path: str, size: int, max_bytes: int) -> Issue:
    """The KV001 for a file over the size cap (it is not read further)."""
    return Issue(
        INVALID_INPUT,
        f"file is {size:,} bytes, over the {max_bytes:,}-byte limit; not checked",
        Location(path, 1, 1),
        fix="raise `max-file-size` in the kvlint configuration if this file really is a manifest",
    )


def decode(data: bytes, path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> SourceText:
    """Decode bytes to text; binary, non-UTF-8 and oversized inputs become a KV001 issue."""
    src = SourceText(path, "")
    if len(data) > max_bytes:
        src.issues.append(oversized(path, len(data), max_bytes))
        return src
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            src.text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            src.issues.append(
                Issue(INVALID_INPUT, f"cannot decode UTF-16 text: {exc.reason}", Location(path, 1, 1))
            )
        return src
    nul = data.find(b"\x00", 0, 8192)
    if nul >= 0:
        line, col = _line_col_of_offset(data, nul)
        src.issues.append(
            Issue(INVALID_INPUT, "binary file (NUL byte); not a YAML text file", Location(path, line, col))
        )
        return src
    try:  # as "utf-8-sig" decodes (a BOM dropped, error offsets after it) without loading that codec
        text = data[3:].decode("utf-8") if data.startswith(codecs.BOM_UTF8) else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col_of_offset(data, exc.start)
        src.issues.append(
            Issue(
                INVALID_INPUT,
                f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start:,} cannot be decoded",
                Location(path, line, col),
                fix="save the file as UTF-8 (YAML 1.2 and Kubernetes read UTF-8)",
            )
        )
        return src
    src.text = text
    m = _CONFLICT_RE().search(text) if any(c * 7 in text for c in "<=>") else None  # 7 of one: a marker
    if m:
        line, _ = position(text, m.start())
        src.issues.append(
            Issue(
                INVALID_INPUT,
                f"unresolved merge-conflict marker {m.group(0).strip()!r}",
                Location(path, line, 1, line, len(m.group(0).rstrip()) + 1),
                fix="resolve the merge conflict before committing",
            )
        )
        return src
    for h in _HELM_RE().finditer(text) if "{{" in text else ():  # every action opens with {{
        line_start = text.rfind("\n", 0, h.start()) + 1
        if text[line_start : h.start()].lstrip().startswith("#"):
            continue  # a template in a comment is only a comment
        if not src.template_offsets:
            line, column = position(text, h.start())
            src.helm_template = Location(path, line, column)
        src.template_offsets.append(h.start())
    return src
