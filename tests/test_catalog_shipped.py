"""kvlint/catalog/shipped.py: the shipped catalog read with its architectures decoded on first use."""

from __future__ import annotations

import json
from pathlib import Path

from kvlint.catalog import shipped

DATA = Path(__file__).resolve().parents[1] / "kvlint" / "catalog" / "data" / "models.json"


def test_the_generated_file_reads_lazily_and_equals_the_whole_json():
    full = json.loads(DATA.read_text(encoding="utf-8"))
    rest, archs = shipped.read(str(DATA))
    assert set(archs) == set(full["archs"])
    assert all(isinstance(v, tuple) for v in archs.values())  # the fast path: nothing decoded yet
    assert rest == {k: v for k, v in full.items() if k != "archs"}
    for key, config in full["archs"].items():
        assert shipped.config(archs, key) == config
        assert archs[key] is shipped.config(archs, key)  # decoded once, kept


def test_a_hand_edited_layout_is_read_whole(tmp_path):
    full = json.loads(DATA.read_text(encoding="utf-8"))
    small = {
        "format": full["format"],
        "archs": dict(list(full["archs"].items())[:3]),
        "models": full["models"][:2],
    }
    path = tmp_path / "models.json"
    path.write_text(json.dumps(small, indent=2))  # not the builder's one-line-per-arch layout
    rest, archs = shipped.read(str(path))
    assert rest["models"] == small["models"]
    assert {k: shipped.config(archs, k) for k in archs} == small["archs"]


def test_a_line_that_is_not_an_architecture_falls_back_to_json(tmp_path):
    text = DATA.read_text(encoding="utf-8")
    first = text.index('"archs": {\n') + len('"archs": {\n')
    line_end = text.index("\n", first)
    broken = text[:first] + '  "a\\"b": {"x":1},' + text[line_end:]  # an escaped quote in a key
    path = tmp_path / "models.json"
    path.write_text(broken, encoding="utf-8")
    rest, archs = shipped.read(str(path))
    assert 'a"b' in archs and archs['a"b'] == {"x": 1}  # whole-JSON reading: the key as JSON means it
    assert len(rest["models"]) == len(json.loads(text)["models"])


def test_every_shipped_data_file_is_ascii_and_the_catalog_keeps_its_text():
    """A character beyond ASCII anywhere makes Python hold the whole decoded file at two or four bytes a
    character (PEP 393): eight CJK characters in one source note of models.json had a fresh run decode
    its 955 kB at that width on the first look-up. The builder writes them as \\u escapes instead, and a
    note reads back unchanged."""
    package = DATA.parents[2]
    data_files = sorted(package.glob("catalog/data/*.json")) + sorted(package.glob("engines/*/data/*.json"))
    assert DATA in data_files and len(data_files) > 10
    assert [p.relative_to(package).as_posix() for p in data_files if not p.read_bytes().isascii()] == []
    notes = [r["source"] for r in json.loads(DATA.read_text(encoding="ascii"))["models"]]
    assert any("基础模型" in n for n in notes)  # Moonshot's own words about Kimi-Dev-72B's base, kept
