"""KAITO's preset catalog: a preset name (a Workspace's inference.preset.name, a preset image's name)
-> the Hugging Face model it serves, as KAITO's own catalog records it (data/kaito_presets.json,
taken from kaito-project/kaito presets/workspace/models/supported_models.yaml, with its commit)."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

DATA = os.path.join(os.path.dirname(__file__), "data", "kaito_presets.json")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)


def hf_id(preset: str) -> str | None:
    """The Hugging Face id of a KAITO preset (case-insensitive), or None when KAITO lists none."""
    return _data()["presets"].get(preset.strip().lower())


def source() -> str:
    return str(_data()["source"])
