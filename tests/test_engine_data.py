"""Every data file of every registered engine (kvlint/engines/<engine>/data/*.json) has the shape its
table kind promises, and every fact row says where it was read: the schema kvlint.engines.facts reads."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from kvlint import engines
from kvlint.engines import facts

# `pkg==X:path[:line]` in a released package, `owner/repo@ref[:path]`, a pull request, or a source file
# of the release the table's `about` names (TGI's launcher/src/main.rs)
CITATION = re.compile(
    r"[\w.-]+==\d[\w.]*:\S|[\w.-]+/[\w.-]+@[\w.]+|PR #?\d+|[\w.-]+/[\w./-]*\.(py|rs|md|html)\b"
)
VALUE_TYPES = (str, bool, int, float, list)
OPTION_KINDS = {"value", "bool", "negatable"}  # options.Option.kind


def _files() -> list[tuple[str, Path]]:
    return [(name, path) for name in engines.names() for path in facts.data_files(name)]


def _citation(source: object) -> str | None:
    if not isinstance(source, str) or not source.strip():
        return "has no source"
    return None if CITATION.search(source) else f"source {source!r} cites no file or release"


def _release_problems(doc: dict) -> list[str]:
    """A release table: rows {since, key, value, source}, each key described, since ordered per key."""
    out: list[str] = []
    keys = doc.get("keys")
    if not isinstance(keys, dict) or not all(isinstance(v, str) and v for v in keys.values()):
        out.append("`keys` must map each key to what it means")
        keys = {}
    try:
        newest = facts.release(doc.get("newest_read", ""))
    except ValueError:
        out.append("`newest_read` is not a release")
        newest = ()
    last: dict[str, tuple[int, ...]] = {}
    for i, row in enumerate(doc.get("rows") or [None]):
        if not isinstance(row, dict) or set(row) != {"since", "key", "value", "source"}:
            out.append(f"row {i}: must have exactly since, key, value, source")
            continue
        where = f"row {i} ({row['key']} since {row['since']})"
        try:
            since = facts.release(row["since"])
        except (TypeError, ValueError):
            out.append(f"{where}: since is not a release")
            continue
        if row["key"] not in keys:
            out.append(f"{where}: key not described in `keys`")
        if not isinstance(row["value"], VALUE_TYPES):
            out.append(f"{where}: value of type {type(row['value']).__name__}")
        if row["key"] in last and since <= last[row["key"]]:
            out.append(f"{where}: not after the key's previous row (duplicate or out of order)")
        if newest and since > newest:
            out.append(f"{where}: after newest_read")
        last[row["key"]] = since
        if problem := _citation(row["source"]):
            out.append(f"{where}: {problem}")
    out += [f"key {k} has no row" for k in keys if k not in last]
    return out


def _option_problems(doc: dict) -> list[str]:
    """An option table (extract.pod.engine_args.options.load_table): option -> kind, with the source read."""
    out = [] if _citation(doc.get("source")) is None else ["the option table cites no source"]
    options = doc.get("options")
    if not isinstance(options, dict) or not options:
        return [*out, "`options` must map option names to kinds"]
    out += [f"option {k}: kind {v!r}" for k, v in options.items() if v not in OPTION_KINDS]
    return out


MEMORY_STATUSES = {"modelled", "not modelled", "no effect"}
MEMORY_COLUMNS = {"option", "status", "target", "applied_by", "changes", "source", "said_by", "detail"}


def _memory_problems(doc: dict) -> list[str]:
    """A memory-options table (kvlint/engines/memory_entry.from_data): one row per option, its status; a
    modelled row names the kvlint function that applies it, any other says what it changes and where the
    engine says so."""
    out: list[str] = []
    seen: set[str] = set()
    for i, row in enumerate(doc.get("rows") or [None]):
        if not isinstance(row, dict) or not {"option", "status"} <= set(row) <= MEMORY_COLUMNS:
            out.append(f"row {i}: option and status, and only {sorted(MEMORY_COLUMNS)}")
            continue
        where = f"row {i} ({row['option']})"
        if row["option"] in seen:
            out.append(f"{where}: a second row for the option")
        seen.add(row["option"])
        if row["status"] not in MEMORY_STATUSES:
            out.append(f"{where}: status {row['status']!r}")
        if any(not isinstance(v, str) or not v.strip() for v in row.values()):
            out.append(f"{where}: an empty or non-text column (leave an unused column out)")
        need = ("applied_by",) if row["status"] == "modelled" else ("changes", "source")
        out += [f"{where}: no {k}" for k in need if k not in row]
        if "source" in row and (problem := _citation(row["source"])):
            out.append(f"{where}: {problem}")
    return out


def _card_problems(doc: dict) -> list[str]:
    """A card table (TGI's launcher): one row per nvidia-smi name, its f16 TFLOPs, the source."""
    out: list[str] = []
    cards = [row.get("card") if isinstance(row, dict) else None for row in doc.get("rows") or [None]]
    if len(set(cards)) != len(cards):
        out.append("a card listed twice")
    for i, row in enumerate(doc.get("rows") or [None]):
        if not isinstance(row, dict) or set(row) != {"card", "tflops", "source"}:
            out.append(f"row {i}: must have exactly card, tflops, source")
            continue
        if not isinstance(row["card"], str) or row["card"] != row["card"].lower() or " " in row["card"]:
            out.append(f"row {i}: card {row['card']!r} is not a lower-case nvidia-smi name with dashes")
        if isinstance(row["tflops"], bool) or not isinstance(row["tflops"], int) or row["tflops"] <= 0:
            out.append(f"row {i}: tflops {row['tflops']!r}")
        if problem := _citation(row["source"]):
            out.append(f"row {i}: {problem}")
    return out


def _tag_problems(doc: dict) -> list[str]:
    """A tag table (Ollama's library, kvlint/engines/llamacpp/ollama_tags.py): per family its page, each
    flavour's Hugging Face base and listed file types, each alias's explicit tag with the evidence read."""
    out: list[str] = [] if _citation(doc.get("source")) is None else ["`source` cites no file or release"]
    for name, fam in (doc.get("families") or {"": None}).items():
        if not isinstance(fam, dict) or set(fam) != {"page", "flavours", "quants", "aliases"}:
            out.append(f"{name!r}: must have exactly page, flavours, quants, aliases")
            continue
        if set(fam["quants"]) != set(fam["flavours"]) or not all("/" in b for b in fam["flavours"].values()):
            out.append(f"{name}: each flavour needs an org/name base and its listed file types")
        for alias, row in fam["aliases"].items():
            flavour = str(row.get("tag", "")).rpartition("-")[0]
            if flavour not in fam["flavours"] or not row.get("evidence"):
                out.append(f"{name}:{alias}: names no flavour of the family, or no evidence")
    return out


def _flag_set_problems(doc: dict) -> list[str]:
    """A flag-set table (kvlint/engines/flag_sets.py): the releases read in order, the files read in each,
    and each flag's runs of consecutive releases, each run between releases read."""
    out: list[str] = []
    releases = doc.get("releases")
    if not isinstance(releases, list) or not releases:
        return ["`releases` must list the releases read"]
    try:
        keys = [facts.release(r) for r in releases]
    except ValueError as exc:
        return [str(exc)]
    if keys != sorted(set(keys)):
        out.append("`releases` out of order or repeated")
    read = doc.get("read") or {}
    out += [f"release {r}: {p}" for r in releases if (p := _citation(read.get(r)))]
    for flag, runs in (doc.get("flags") or {}).items():
        for run in runs if isinstance(runs, list) and runs else [None]:
            ends = str(run).split("..")
            if (
                run is None
                or not all(e in releases for e in ends)
                or (len(ends) == 2 and releases.index(ends[0]) >= releases.index(ends[1]))
            ):
                out.append(f"flag {flag}: run {run!r} is not between releases read")
    return out


def _image_problems(doc: dict) -> list[str]:
    """NIM's image table: one row per image `org/name`, the Hugging Face id it serves, the source."""
    out: list[str] = []
    images = [row.get("image") if isinstance(row, dict) else None for row in doc.get("rows") or [None]]
    if len(set(images)) != len(images):
        out.append("an image listed twice")
    for i, row in enumerate(doc.get("rows") or [None]):
        if not isinstance(row, dict) or set(row) != {"image", "model", "source"}:
            out.append(f"row {i}: must have exactly image, model, source")
            continue
        for key in ("image", "model"):
            if not isinstance(row[key], str) or row[key].count("/") != 1:
                out.append(f"row {i}: {key} {row[key]!r} is not org/name")
        if row["image"] != row["image"].lower():
            out.append(f"row {i}: image {row['image']!r} is not lower-case (as image names are)")
        if problem := _citation(row["source"]):
            out.append(f"row {i}: {problem}")
    return out


PROFILE_KEYS = {
    "id",
    "backend",
    "precision",
    "tp",
    "pp",
    "gpus",
    "gpu",
    "gpu_tag",
    "gpu_device",
    "kind",
    "lora",
    "buildable",
}


def _profile_problems(doc: dict) -> list[str]:
    """NIM's profile table: per image release its source and profiles (a 64-hex id, a backend NIM has, TP and
    PP counts, the catalog GPU a hardware-specific profile targets); each GPU a profile names is a catalog GPU."""
    from kvlint.catalog import gpus

    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    for i, rel in enumerate(doc.get("releases") or [None]):
        if not isinstance(rel, dict) or not {"image", "release", "source", "profiles"} <= set(rel):
            out.append(f"release {i}: must have image, release, source, profiles")
            continue
        where = f"{rel['image']}:{rel['release']}"
        if (rel["image"], rel["release"]) in seen:
            out.append(f"{where}: listed twice")
        seen.add((rel["image"], rel["release"]))
        if problem := _citation(rel["source"]):
            out.append(f"{where}: {problem}")
        ids = [p.get("id") for p in rel["profiles"]]
        if len(set(ids)) != len(ids) or not all(re.fullmatch(r"[0-9a-f]{64}", str(x)) for x in ids):
            out.append(f"{where}: profile ids must be distinct 64-hex ids")
        for p in rel["profiles"]:
            if not set(p) <= PROFILE_KEYS or p.get("backend") not in ("tensorrt_llm", "vllm", "sglang"):
                out.append(f"{where} {p.get('id', '')[:8]}: unknown key or backend")
            if not all(isinstance(p.get(k), int) and p[k] >= 1 for k in ("tp", "pp")):
                out.append(f"{where} {p.get('id', '')[:8]}: tp and pp must be counts")
            if "gpu" in p and gpus.by_id(p["gpu"]) is None:
                out.append(f"{where} {p.get('id', '')[:8]}: GPU {p['gpu']!r} is not in the catalog")
    return out + _unpublished_problems(doc, seen)


def _unpublished_problems(doc: dict, listed: set[tuple[str, str]]) -> list[str]:
    """The releases looked for and not found: each once, none also listed, each saying what was found."""
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    for i, row in enumerate(doc.get("unpublished") or []):
        if not isinstance(row, dict) or set(row) != {"image", "release", "found"}:
            out.append(f"unpublished {i}: must have exactly image, release, found")
            continue
        key = (row["image"], row["release"])
        if key in seen or key in listed:
            out.append(f"unpublished {key}: listed twice, or also in releases")
        seen.add(key)
        if problem := _citation(row["found"]):
            out.append(f"unpublished {key}: {problem}")
    return out


SCHEMAS = {
    "profiles": _profile_problems,
    "images": _image_problems,
    "flag_sets": _flag_set_problems,
    "releases": _release_problems,
    "options": _option_problems,
    "memory_options": _memory_problems,
    "cards": _card_problems,
    "tags": _tag_problems,
}


def problems(engine: str, doc: object) -> list[str]:
    """What is wrong with one data file of `engine` (empty: it validates)."""
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    kind = doc.get("table", "options")
    if not str(doc.get("engine", "")).startswith(engine):
        return [f"engine {doc.get('engine')!r} in {engine}'s package"]
    if kind not in SCHEMAS:
        return [f"table kind {kind!r} has no schema"]
    if kind != "options" and not (isinstance(doc.get("about"), str) and doc["about"]):
        return ["`about` must say what the table holds"]
    return SCHEMAS[kind](doc)


def test_every_registered_engine_has_data_files():
    assert {name for name, _ in _files()} == set(engines.names())


@pytest.mark.parametrize(("engine", "path"), _files(), ids=lambda v: getattr(v, "name", v))
def test_data_file_validates(engine, path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert problems(engine, doc) == [], path


def _release_files() -> list[tuple[str, Path]]:
    return [
        (e, p) for e, p in _files() if json.loads(p.read_text(encoding="utf-8")).get("table") == "releases"
    ]


@pytest.mark.parametrize(("engine", "path"), _release_files(), ids=lambda v: getattr(v, "name", v))
def test_release_rows_load_as_the_file_says(engine, path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    rows = facts.changes(engine, path.stem)
    assert [(c.key, c.value, c.source) for c in rows] == [
        (r["key"], r["value"], r["source"]) for r in doc["rows"]
    ]
    for key in doc["keys"]:  # the newest row of each key is the one an unversioned deployment gets
        assert facts.in_force(rows, key, None) == [c for c in rows if c.key == key][-1]


def _a_release_table() -> dict:
    return copy.deepcopy(facts.load("vllm", "releases"))


BROKEN = {
    "no source": lambda d: d["rows"][0].pop("source"),
    "empty source": lambda d: d["rows"][0].update(source=" "),
    "source citing nothing": lambda d: d["rows"][0].update(source="read somewhere"),
    "since not a release": lambda d: d["rows"][0].update(since="v0.x"),
    "since a number": lambda d: d["rows"][0].update(since=0.1),
    "value of an unknown type": lambda d: d["rows"][0].update(value={"a": 1}),
    "an extra column": lambda d: d["rows"][0].update(until="0.2"),
    "undescribed key": lambda d: d["rows"][0].update(key="gpu_memory_utilisation"),
    "duplicate row": lambda d: d["rows"].insert(1, dict(d["rows"][0])),
    "rows out of order": lambda d: d["rows"].__setitem__(slice(0, 2), d["rows"][1::-1]),
    "row after the newest release read": lambda d: d.update(newest_read="0.1"),
    "key without a row": lambda d: d["keys"].update(spare="a key no row sets"),
    "another engine's table": lambda d: d.update(engine="sglang"),
    "unknown table kind": lambda d: d.update(table="rumours"),
}


MEMORY_BROKEN = {
    "no source": lambda d: d["rows"][-1].pop("source"),
    "source citing nothing": lambda d: d["rows"][-1].update(source="somewhere"),
    "unknown status": lambda d: d["rows"][0].update(status="sort of"),
    "modelled without the function": lambda d: d["rows"][0].pop("applied_by"),
    "empty column": lambda d: d["rows"][0].update(target=""),
    "unknown column": lambda d: d["rows"][0].update(sources="x"),
    "second row for an option": lambda d: d["rows"].append(dict(d["rows"][0])),
}


@pytest.mark.parametrize("breakage", sorted(MEMORY_BROKEN))
def test_a_broken_memory_table_is_caught(breakage):
    doc = copy.deepcopy(facts.load("vllm", "memory_options"))
    assert problems("vllm", doc) == []
    MEMORY_BROKEN[breakage](doc)
    assert problems("vllm", doc), breakage


CARD_BROKEN = {
    "no source": lambda d: d["rows"][0].pop("source"),
    "card twice": lambda d: d["rows"].append(dict(d["rows"][0])),
    "tflops as text": lambda d: d["rows"][0].update(tflops="900"),
    "card as nvidia-smi prints it": lambda d: d["rows"][0].update(card="NVIDIA H100"),
}


@pytest.mark.parametrize("breakage", sorted(CARD_BROKEN))
def test_a_broken_card_table_is_caught(breakage):
    doc = copy.deepcopy(facts.load("tgi", "cards"))
    assert problems("tgi", doc) == []
    CARD_BROKEN[breakage](doc)
    assert problems("tgi", doc), breakage


UNPUBLISHED_BROKEN = {
    "a release both listed and not found": lambda d: d["unpublished"].append(
        {
            "image": d["releases"][0]["image"],
            "release": d["releases"][0]["release"],
            "found": d["unpublished"][0]["found"],
        }
    ),
    "found citing nothing": lambda d: d["unpublished"][0].update(found="nothing"),
    "a row with no release": lambda d: d["unpublished"][0].pop("release"),
}


@pytest.mark.parametrize("breakage", sorted(UNPUBLISHED_BROKEN))
def test_a_broken_nim_unpublished_row_is_caught(breakage):
    doc = copy.deepcopy(facts.load("nim", "profiles"))
    assert problems("nim", doc) == []
    UNPUBLISHED_BROKEN[breakage](doc)
    assert problems("nim", doc), breakage


@pytest.mark.parametrize("breakage", sorted(BROKEN))
def test_a_broken_table_is_caught(breakage):
    doc = _a_release_table()
    assert problems("vllm", doc) == []
    BROKEN[breakage](doc)
    assert problems("vllm", doc), breakage


def test_a_broken_option_table_is_caught():
    doc = copy.deepcopy(facts.load("vllm", "options"))
    assert problems("vllm", doc) == []
    doc["options"]["--made-up"] = "sometimes"
    assert problems("vllm", doc)
    assert problems("vllm", {**doc, "source": ""})


@pytest.fixture
def edited_vllm_releases(monkeypatch):
    """vLLM's release table with rows added, as a contributor adding a release would write them."""
    doc = _a_release_table()
    real = facts.load
    monkeypatch.setattr(facts, "load", lambda e, t: doc if (e, t) == ("vllm", "releases") else real(e, t))
    facts.changes.cache_clear()
    yield doc
    monkeypatch.undo()
    facts.changes.cache_clear()


def test_adding_a_release_is_rows_in_the_data_file(edited_vllm_releases):
    """A new release's change is one row (and the newest release read): nothing in Python changes, and the
    plan's defaults follow the row."""
    from kvlint.engines.vllm import versions as vv

    before = vv.default_utilization((0, 33, 0))
    assert "newer than kvlint's table" in vv.describe("gpu_memory_utilization", (0, 34, 0))
    edited_vllm_releases["newest_read"] = "0.34.0"
    edited_vllm_releases["rows"].append(
        {
            "since": "0.34.0",
            "key": "gpu_memory_utilization",
            "value": 0.95,
            "source": "vllm==0.34.0:vllm/config/cache.py:66 Field(default=0.95) (an example row)",
        }
    )
    assert problems("vllm", edited_vllm_releases) == []
    facts.changes.cache_clear()
    assert vv.default_utilization((0, 34, 0))[0] == 0.95 != before[0]
    assert vv.default_utilization((0, 33, 0)) == before  # the release before keeps its row
    assert vv.describe("gpu_memory_utilization", (0, 34, 0)).startswith("vllm==0.34.0:")
