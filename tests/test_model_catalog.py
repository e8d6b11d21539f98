"""The shipped model catalog: every entry sourced, every id once, every architecture parseable,
and the file in step with the sources it is built from (benchmarks/build_catalog.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kvlint.catalog import models
from kvlint.catalog.hf_config import parse_config

ROOT = Path(__file__).resolve().parents[1]
DATA = json.loads(Path(models.DATA, "models.json").read_text())
SOURCES = json.loads((ROOT / "benchmarks" / "catalog_sources.json").read_text())
CURATED = json.loads((ROOT / "benchmarks" / "catalog_curated.json").read_text())
MIRRORS = Path(os.environ.get("KVLINT_MIRRORS", "/work/.mirror"))


def _merged(row):
    config = DATA["archs"][row["arch"]]
    return models._merge(config, row["additions"]) if row.get("additions") else config


def test_format_stores_each_architecture_once():
    assert DATA["format"] == "kvlint-models/2"
    used = {row["arch"] for row in DATA["models"]}
    assert used == set(DATA["archs"]), "an arch no id uses, or an id naming a missing arch"
    texts = [json.dumps(c, sort_keys=True) for c in DATA["archs"].values()]
    assert len(texts) == len(set(texts)), "the same architecture is stored twice"
    assert len(DATA["archs"]) < len(DATA["models"])


def test_every_entry_names_its_source():
    for row in DATA["models"]:
        assert isinstance(row["source"], str) and len(row["source"]) > 20, row["id"]
        assert row["source"].startswith(("github:", "https://", "NVIDIA-NeMo/")), row["id"]


def test_no_id_twice_and_aliases_do_not_shadow_ids():
    ids = [row["id"].lower() for row in DATA["models"]]
    assert len(ids) == len(set(ids))
    aliases = [a.lower() for row in DATA["models"] for a in row.get("aliases", [])]
    assert len(aliases) == len(set(aliases))
    assert not set(aliases) & set(ids)


def test_every_architecture_parses_with_kvlints_parser():
    parsed = 0
    for row in DATA["models"]:
        if row.get("kv_cache") == "none":
            assert row.get("kv_cache_note"), row["id"]
            continue
        arch = parse_config(_merged(row), row["id"], "test", hf_quant=row.get("hf_quant_config"))
        assert arch.layers > 0 and arch.kv_heads > 0 and arch.head_dim > 0, row["id"]
        assert arch.attention_layers > 0 and arch.params > 0, row["id"]
        parsed += 1
    assert parsed >= len(DATA["models"]) - 10


def test_twins_share_the_architecture_of_the_config_they_name():
    by_id = {row["id"]: row for row in DATA["models"]}
    twins = [row for row in DATA["models"] if row.get("twin_of")]
    assert twins
    for row in twins:
        assert row["twin_of"] in by_id, row["id"]
        assert by_id[row["twin_of"]]["arch"] == row["arch"], row["id"]
        assert row["twin_of"] in row["source"], row["id"]


def test_catalog_ids_are_exactly_the_sources_lists_ids():
    listed = {i for e in SOURCES["entries"] for i in e["ids"]} | {m["id"] for m in CURATED["models"]}
    assert listed == {row["id"] for row in DATA["models"]}
    excluded = {i for e in SOURCES["excluded"] for i in e["ids"]}
    assert not excluded & listed
    assert all(e["reason"] for e in SOURCES["excluded"])


def test_lookup_api():
    assert {row["id"] for row in DATA["models"]} <= set(models.all_ids())  # + any registered by config
    assert models.all_ids() == sorted(models.all_ids(), key=str.lower)
    entry = models.lookup("HF://Meta-Llama/Meta-Llama-3.1-8B-Instruct@main")
    assert entry is not None and entry["id"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert entry["config"]["num_hidden_layers"] == 32 and entry["source"]
    assert models.lookup("acme/not-a-model") is None


def test_catalog_covers_the_mainstream_families():
    ids = {i.lower() for i in models.all_ids()}
    for expected in (
        "meta-llama/llama-3.1-405b-instruct",
        "mistralai/mixtral-8x7b-instruct-v0.1",
        "codellama/codellama-7b-instruct-hf",
        "google/gemma-2-2b",
        "allenai/olmo-2-1124-7b-instruct",
        "huggingfacetb/smollm2-360m-instruct",
        "bigcode/starcoder2-7b",
    ):
        assert expected in ids, expected


def test_encoder_only_model_is_known_to_keep_no_kv_cache():
    encoders = [row for row in DATA["models"] if row.get("kv_cache") == "none"]
    assert encoders
    res = models.resolve(encoders[0]["id"])
    assert res.arch is None and res.no_kv_cache and "no KV cache" in res.how


def _source_repos() -> set[str]:
    """Every git repository catalog_sources.json reads a config from (github:OWNER/REPO@...)."""
    entries = json.loads((ROOT / "benchmarks" / "catalog_sources.json").read_text())["entries"]
    refs = [e["config"] for e in entries] + [e["hf_quant"] for e in entries if e.get("hf_quant")]
    return {ref.split(":", 1)[1].split("@", 1)[0] for ref in refs}


@pytest.mark.skipif(
    not all((MIRRORS / repo.replace("/", "+")).is_dir() for repo in _source_repos()),
    reason="a git mirror the catalog is built from is not on this machine (see benchmarks/build_catalog.py)",
)
def test_shipped_catalog_is_what_the_build_script_makes_from_its_sources():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "build_catalog.py"), "--check", "--mirrors", str(MIRRORS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
