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
