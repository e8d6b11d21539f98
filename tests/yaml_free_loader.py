"""Read ../shared's YAML reference files with kvlint's own loader (no PyYAML in the test deps)."""

from __future__ import annotations

from pathlib import Path


def load(path: Path):
    from kvlint.load import load_bytes
    from kvlint.load.tree import to_plain

    loaded = load_bytes(Path(path).read_bytes(), str(path), max_bytes=64 * 1024 * 1024)
    assert not loaded.issues, loaded.issues
    return to_plain(loaded.documents[0].root, [10_000_000])
