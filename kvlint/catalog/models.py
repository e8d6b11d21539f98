"""Resolve a model reference to a ModelArch: local config.json, the shipped catalog, the HF cache.

No network: a model kvlint cannot find here stays unknown (KV003 says so and what was skipped).
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import Any

from kvlint.catalog.arch import ModelArch
from kvlint.catalog.hf_config import ConfigError, parse_config
from kvlint.record import record

DATA = os.path.join(os.path.dirname(__file__), "data")
MAX_CONFIG_BYTES = 4 * 1024 * 1024


@record(frozen=True)
class Resolution:
    arch: ModelArch | None
    how: str  # how it was found, or why not


def _norm(ref: str) -> str:
    return ref.strip().lower()


@lru_cache(maxsize=1)
def _catalog() -> tuple[dict[str, dict[str, Any]], dict[str, str], dict[str, list[str]]]:
    """(entries by lower-case id, alias -> id, last path component -> ids)."""
    data = _read_json(os.path.join(DATA, "models.json"), limit=None)
    entries: dict[str, dict[str, Any]] = {}
    aliases: dict[str, str] = {}
    names: dict[str, list[str]] = {}
    extra = _extra_models()
    for entry in list(data["models"]) + extra:
        key = _norm(entry["id"])
        entries[key] = entry
        for alias in entry.get("aliases", []):
            aliases[_norm(alias)] = key
        names.setdefault(key.rsplit("/", 1)[-1], []).append(key)
        for alias in entry.get("aliases", []):
            names.setdefault(_norm(alias).rsplit("/", 1)[-1], []).append(key)
    return entries, aliases, names


_EXTRA: list[dict[str, Any]] = []


def _extra_models() -> list[dict[str, Any]]:
    return list(_EXTRA)


def register_models(entries: list[dict[str, Any]]) -> None:
    """Add catalog entries (same schema as models.json), e.g. from the user's configuration."""
    _EXTRA.extend(entries)
    _catalog.cache_clear()
    arch_for_entry.cache_clear()
    _suggest.cache_clear()


def catalog_ids() -> list[str]:
    entries, _, _ = _catalog()
    return sorted(e["id"] for e in entries.values())


def _merge(base: dict, add: dict) -> dict:
    out = dict(base)
    for k, v in add.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


@lru_cache(maxsize=256)
def arch_for_entry(key: str) -> ModelArch:
    entries, _, _ = _catalog()
    entry = entries[key]
    config = _merge(entry["config"], entry["additions"]) if entry.get("additions") else entry["config"]
    return parse_config(
        config,
        entry["id"],
        f"kvlint catalog ({entry.get('source', 'source not recorded')})",
        hf_quant=entry.get("hf_quant_config"),
        checkpoint_bytes=entry.get("checkpoint_bytes"),
        checkpoint_source=entry.get("checkpoint_bytes_source", ""),
    )


_PREFIXES = re.compile(r"^(?:hf://|https?://huggingface\.co/|huggingface\.co/|hf\.co/)", re.IGNORECASE)


def strip_ref(ref: str) -> str:
    """`hf://org/name`, `https://huggingface.co/org/name` and `org/name@rev` all mean org/name."""
    ref = _PREFIXES.sub("", ref.strip())
    ref = ref.split("@", 1)[0] if "@" in ref and "/" in ref.split("@", 1)[0] else ref
    return ref.rstrip("/")


def _read_json(path: str, limit: int | None = MAX_CONFIG_BYTES) -> Any:
    if limit is not None and os.stat(path).st_size > limit:
        raise ConfigError(f"{path} is larger than {limit:,} bytes")
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def from_directory(directory: str, model_id: str) -> ModelArch:
    """A model directory (or the directory of a config.json): config + optional index and ModelOpt file."""
    config_path = os.path.join(directory, "config.json")
    config = _read_json(config_path)
    total, total_source = None, ""
    index = os.path.join(directory, "model.safetensors.index.json")
    if os.path.isfile(index):
        meta = (_read_json(index) or {}).get("metadata") or {}
        if isinstance(meta.get("total_size"), int):
            total, total_source = meta["total_size"], f"{index} metadata.total_size"
    hf_quant = None
    quant_path = os.path.join(directory, "hf_quant_config.json")
    if os.path.isfile(quant_path):
        hf_quant = _read_json(quant_path)
    return parse_config(config, model_id, config_path, hf_quant, total, total_source)


def _hf_cache_dirs() -> list[str]:
    dirs = []
    if os.environ.get("HF_HUB_CACHE"):
        dirs.append(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        dirs.append(os.path.join(os.environ["HF_HOME"], "hub"))
    dirs.append(os.path.join(os.path.expanduser("~"), ".cache", "huggingface", "hub"))
    return dirs


def from_hf_cache(model_id: str) -> ModelArch | None:
    if model_id.count("/") != 1:
        return None
    folder = "models--" + model_id.replace("/", "--")
    for cache in _hf_cache_dirs():
        snapshots = os.path.join(cache, folder, "snapshots")
        if not os.path.isdir(snapshots):
            continue
        snaps = [os.path.join(snapshots, name) for name in os.listdir(snapshots)]
        for snap in sorted(snaps, key=os.path.getmtime, reverse=True):
            if os.path.isfile(os.path.join(snap, "config.json")):
                arch = from_directory(snap, model_id)
                return arch
    return None


def resolve(ref: str, base_dir: str = ".") -> Resolution:
    """Find the architecture of `ref`: a path to config.json or its directory, a catalog id or alias,
    or a model in the local Hugging Face cache."""
    raw = ref.strip()
    if not raw:
        return Resolution(None, "no model named")
    looks_like_path = raw.startswith(("/", "./", "../", "~")) or raw.endswith(".json")
    candidate = os.path.join(base_dir, os.path.expanduser(raw))  # an absolute path stays as it is
    try:
        if os.path.isfile(candidate) and candidate.endswith(".json"):
            return Resolution(from_directory(os.path.dirname(candidate), raw), f"local file {candidate}")
        if os.path.isdir(candidate) and os.path.isfile(os.path.join(candidate, "config.json")):
            return Resolution(from_directory(candidate, raw), f"local directory {candidate}")
    except (OSError, ValueError, ConfigError) as exc:
        return Resolution(None, f"could not read {candidate}: {exc}")

    entries, aliases, names = _catalog()
    ident = strip_ref(raw)
    key = _norm(ident)
    key = aliases.get(key, key)
    if key in entries:
        return Resolution(arch_for_entry(key), "kvlint catalog")
    try:
        cached = from_hf_cache(ident)
    except (OSError, ValueError, ConfigError) as exc:
        return Resolution(None, f"Hugging Face cache copy of {ident} is unreadable: {exc}")
    if cached is not None:
        return Resolution(cached, "local Hugging Face cache")
    # A local path whose last component names a catalog model (e.g. /models/Qwen3-8B): match by name.
    last = key.rstrip("/").rsplit("/", 1)[-1]
    matches = sorted(set(names.get(last, [])))
    if (looks_like_path or "/" not in ident or ident.count("/") > 1) and len(matches) == 1:
        arch = arch_for_entry(matches[0])
        return Resolution(arch, f"matched by name to catalog model {arch.id}")
    return Resolution(
        None, "not in the kvlint catalog, not a local config.json, not in the Hugging Face cache"
    )


_WORD = re.compile(r"[a-z]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text))


def suggest(ref: str, limit: int = 3) -> list[str]:
    """Catalog ids close to `ref`, for \"did you mean\"; remembered per name (difflib is slow)."""
    return list(_suggest(_norm(strip_ref(ref)), limit))


@lru_cache(maxsize=256)
def _suggest(key: str, limit: int) -> tuple[str, ...]:
    import difflib

    entries, aliases, _ = _catalog()
    pool = {e["id"].lower(): e["id"] for e in entries.values()}
    # difflib over the whole catalog costs ~5 ms a call; only ids sharing a word can be close
    words = _words(key)
    candidates = [k for k in pool if words & _words(k)]
    close = difflib.get_close_matches(key, candidates, n=limit, cutoff=0.6)
    if not close:
        tail = key.rsplit("/", 1)[-1]
        close = (
            [k for k in pool if k.rsplit("/", 1)[-1].startswith(tail[:8])][:limit] if len(tail) >= 6 else []
        )
    return tuple(pool[c] for c in close)
