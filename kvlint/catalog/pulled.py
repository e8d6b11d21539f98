"""The project-local catalog: models `kvlint models pull` wrote, read before the shipped catalog.

One JSON file per model in `.kvlint/models/` (relative to the working directory, or the directory
named by KVLINT_MODELS_DIR), in the shipped catalog's compact form: id, revision, source, config
(the config.json keys kvlint reads), hf_quant_config, checkpoint_bytes and its source. Teams commit
the directory, so pre-commit and CI resolve these models with no network.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

from kvlint.catalog import how
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.hf_config import parse_config
from kvlint.fileio import json_value, shown

DEFAULT_DIR = os.path.join(".kvlint", "models")
MAX_ENTRY_BYTES = 4 * 1024 * 1024


def models_dir() -> str:
    return os.environ.get("KVLINT_MODELS_DIR") or DEFAULT_DIR


def file_name(model_id: str) -> str:
    """`org/name` -> `org--name.json` (the Hugging Face cache's spelling of a repository)."""
    return model_id.replace("/", "--") + ".json"


@lru_cache(maxsize=4)
def _index(directory: str) -> dict[str, str]:
    """lower-case id -> file, from the names in the directory (listed once per run)."""
    if not os.path.isdir(directory):
        return {}
    out = {}
    for name in os.listdir(directory):
        if name.endswith(".json"):
            out[name[: -len(".json")].replace("--", "/", 1).lower()] = os.path.join(directory, name)
    return out


def entries(directory: str) -> dict[str, str]:
    """lower-case id -> file of every entry in `directory` (listed once per run)."""
    return dict(_index(directory))


def find(model_id: str, directory: str | None = None) -> tuple[ModelArch, str] | None:
    """The pulled model's architecture and where it came from; None when it was never pulled."""
    path = _index(directory or models_dir()).get(model_id.lower())
    if path is None:
        return None
    from kvlint.fileio import read_regular

    entry: dict[str, Any] = json_value(read_regular(path, MAX_ENTRY_BYTES))  # OSError: not regular, too large
    if not isinstance(entry, dict) or not isinstance(entry.get("config"), dict):
        raise ValueError(f"{path} is not a kvlint model entry (no config object)")
    if str(entry.get("id") or model_id).lower() != model_id.lower():  # never trust the file's own claim
        raise ValueError(f"{path} holds {str(entry.get('id'))[:80]!r}, not {model_id!r}")
    source = f"{shown(path)} ({entry.get('source', 'source not recorded')})"
    arch = parse_config(
        entry["config"],
        str(entry.get("id") or model_id),
        source,
        hf_quant=entry.get("hf_quant_config"),
        checkpoint_bytes=entry.get("checkpoint_bytes"),
        checkpoint_source=str(entry.get("checkpoint_bytes_source") or ""),
    )
    return arch, f"{how.PULLED} {shown(path)}"


def write(entry: dict[str, Any], directory: str | None = None) -> str:
    """Write one entry (sorted keys, one file per model) and return its path."""
    directory = directory or models_dir()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, file_name(entry["id"]))
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(entry, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)
    _index.cache_clear()
    return path
