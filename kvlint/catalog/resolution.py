"""How a model reference resolved: its architecture, or why not (kvlint/catalog/models.py resolve)."""

from __future__ import annotations

from kvlint.catalog.arch import ModelArch
from kvlint.record import record


@record(frozen=True)
class Resolution:
    arch: ModelArch | None
    how: str  # how it was found, or why not
    no_kv_cache: bool = False  # a catalogued model that keeps no KV cache (encoder-only); arch is None
    derived: str = ""  # the name rules that matched (KV007 names them); empty for an exact find
    derived_from: str = ""  # where the base's facts come from
    fix: str = ""  # the exact step that makes an unknown model known, when kvlint knows it
    # known, but its capacity cannot be checked: why (a GGUF whose quant type the name does not state);
    # arch then carries the base's facts (KV per token), never weights to plan with
    unpriced: str = ""
    unpriced_fix: str = ""  # what to serve instead, when that is not a GGUF file naming its type
    # not a text-generation checkpoint (kvlint/catalog/model_kinds.py): what it is; arch is None
    kind: str = ""
    # a file was found for the reference and could not be read: a KV003 warning, never the info a
    # reference that names no model gets (kvlint/unreadable_model.py)
    read_failed: bool = False
