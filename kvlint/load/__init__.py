"""load: bytes -> text -> YAML documents with positions, plus suppression directives and problems."""

from __future__ import annotations

from kvlint.findings import Issue
from kvlint.load.compose import Document, compose
from kvlint.load.directives import Directive, read_directives
from kvlint.load.source import DEFAULT_MAX_BYTES, SourceText, decode
from kvlint.record import field, record


@record
class LoadedFile:
    source: SourceText
    documents: list[Document] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.source.path


def load_bytes(data: bytes, path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadedFile:
    source = decode(data, path, max_bytes)
    loaded = LoadedFile(source, issues=list(source.issues))
    if source.issues:
        return loaded
    loaded.directives = read_directives(source.lines, path) if "kvlint" in source.text else []
    if source.helm_template is not None:
        return loaded  # the runner reports one KV004 line; the YAML is not the deployed YAML yet
    docs, issues = compose(source.text, path)
    loaded.documents = docs
    loaded.issues.extend(issues)
    return loaded


__all__ = ["Directive", "Document", "LoadedFile", "load_bytes"]
