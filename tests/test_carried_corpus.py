"""tests/data/corpus carries excerpts of real corpus files, so the tests that read them run on a bare
clone. An excerpt is lines of the published file, unchanged and in their order (what the tests read:
the objects, keys and flags they assert on); tests/data/corpus/INDEX.yaml names each one's source as
the reference corpus's INDEX.yaml does. Held here: every excerpt is indexed and names its source; and,
where ../shared is beside the checkout, the source is the corpus's and every line is the file's."""

from __future__ import annotations

import pytest
import yaml_free_loader
from conftest import CARRIED, SHARED, shared_params

INDEX = yaml_free_loader.load(CARRIED / "INDEX.yaml")["files"]
FIELDS = ("file", "folder", "repo", "path", "commit", "license", "tests")


def test_every_excerpt_is_indexed_with_its_source():
    files = sorted(p.name for p in CARRIED.iterdir() if p.name != "INDEX.yaml")
    assert files == sorted(e["file"] for e in INDEX) and len(files) >= 10
    for entry in INDEX:
        assert tuple(entry) == FIELDS, entry["file"]
        assert entry["folder"] in ("manifests", "manifests2") and len(entry["commit"]) == 40, entry["file"]
        assert entry["file"].startswith(entry["repo"].replace("/", "__") + "__"), entry["file"]
        assert all(t.startswith("tests/test_") for t in entry["tests"]), entry["file"]


def _in_order(lines: list[str], within: list[str]) -> list[str]:
    """The lines of `lines` not found, in order, in `within`."""
    it = iter(within)
    return [line for line in lines if not any(line == other for other in it)]


@pytest.mark.parametrize("entry", shared_params("corpus", INDEX, ids=lambda e: e["file"][:60]))
def test_each_excerpt_is_lines_of_the_corpus_file_it_names(entry):
    folder = SHARED / "corpus" / entry["folder"]
    (source,) = [e for e in yaml_free_loader.load(folder / "INDEX.yaml") if e["file"] == entry["file"]]
    assert {k: source[k] for k in ("repo", "path", "commit", "license")} == {
        k: entry[k] for k in ("repo", "path", "commit", "license")
    }
    real = (folder / entry["file"]).read_text(encoding="utf-8").splitlines()
    excerpt = (CARRIED / entry["file"]).read_text(encoding="utf-8").splitlines()
    assert excerpt and _in_order(excerpt, real) == []
