"""dstack's `resources.gpu` grammar, and the GPU types a request admits, as dstack itself selects them.

The grammar (dstackai/dstack src/dstack/_internal/core/models/resources.py @0.21.2):
- a number is a count (`gpu: 2`, GPUSpec.parse, :287-289);
- a string is `:`-separated tokens (:290-318): a vendor (`nvidia`, `amd`, `tpu`/`google`, `intel`,
  `tt`/`tenstorrent`), a name list (a token starting with a letter: `H100`, `A100,H100`), a memory (a
  token with a unit: `24GB`, `24GB..`, `16GB..80GB`), else a count (`2`, `1..2`, `2..`);
- a mapping has `name` (one or a list), `count`, `memory`, `total_memory`, `vendor`,
  `compute_capability` (GPUSpec, :246-272).
A range is `min..max` with either side open, a single value is min = max (Range._parse, :52-60). Memory
is a number of GB where `MB` is /1024 and `TB` x1024 (Memory.parse, :99-112): binary units, and dstack
turns it into MiB as x1024 (src/dstack/_internal/core/backends/base/offers.py:96), so a dstack GB is a
GiB. The count defaults to `1..` (DEFAULT_GPU_COUNT, :179; since 0.19.9).

A request admits every accelerator of gpuhunt's catalogue whose vendor, name, per-GPU memory and
compute capability it allows (gpuhunt constraints.py:19-79 `matches`, the names compared without case);
with no name and no vendor, a file that sets no `image` runs dstack's own CUDA image, so NVIDIA only
(dstack src/dstack/_internal/server/services/resources.py:19-45 set_default_gpu_spec_vendor).
"""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from typing import Any

from kvlint.load.tree import Mapping, Node, Scalar, Sequence
from kvlint.record import record

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "catalog", "data", "platform_gpus.json")
Bound = float | None


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)["dstack"]  # type: ignore[no-any-return]


def source() -> str:
    return str(_table()["source"])


@record(frozen=True)
class GpuRequest:
    vendor: str | None = None  # gpuhunt's vendor name
    names: tuple[str, ...] | None = None
    count: tuple[Bound, Bound] = (1, None)
    memory: tuple[Bound, Bound] | None = None  # GiB per GPU
    total_memory: tuple[Bound, Bound] | None = None
    compute_capability: tuple[int, int] | None = None


@record(frozen=True)
class Card:
    name: str  # gpuhunt's name
    memory: float  # GiB, gpuhunt's figure
    vendor: str
    id: str | None  # kvlint's catalog id; None when kvlint has no memory for it


class GrammarError(ValueError):
    """The value is not one dstack accepts (its own parser raises for it too)."""


def _vendor(token: str) -> str | None:
    v = token.lower()
    v = {"tpu": "google", "tt": "tenstorrent"}.get(v, v)
    return v if v in ("nvidia", "amd", "google", "intel", "tenstorrent") else None


def accelerator_kind(vendor: str) -> str:
    """kvlint's accelerator kind for a gpuhunt vendor (gpu, tpu, gaudi, tenstorrent)."""
    return str(_table()["vendors"].get(vendor, vendor))


def memory(value: object) -> float:
    """A dstack memory size in GiB (Memory.parse)."""
    if isinstance(value, bool):
        raise GrammarError(f"not a memory size: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).replace(" ", "").lower()
    scale = 1.0
    for unit, factor in (("tb", 1024.0), ("gb", 1.0), ("mb", 1 / 1024)):
        if text.endswith(unit):
            text, scale = text[: -len(unit)], factor
            break
    try:
        return float(text) * scale
    except ValueError:
        raise GrammarError(f"not a memory size: {value!r}") from None


def _bound(text: str, parse) -> Bound:
    return parse(text) if text else None


def value_range(value: object, parse) -> tuple[Bound, Bound]:
    """`2`, `1..2`, `24GB..`, `..80GB`, or a `{min, max}` mapping (Range._parse / _post_validate)."""
    if isinstance(value, dict):
        low, high = value.get("min"), value.get("max")
        out = (None if low is None else parse(low), None if high is None else parse(high))
    elif isinstance(value, str) and ".." in value:
        low_text, _, high_text = value.replace(" ", "").partition("..")
        out = (_bound(low_text, parse), _bound(high_text, parse))
    else:
        one = parse(value)
        out = (one, one)
    if out == (None, None):
        raise GrammarError("an empty range (`..`)")
    if out[0] is not None and out[1] is not None and out[0] > out[1]:
        raise GrammarError(f"a range whose minimum is above its maximum ({value})")
    return out


def _count(value: object) -> float:
    if isinstance(value, bool) or not str(value).strip().isdigit():
        raise GrammarError(f"not a GPU count: {value!r}")
    return float(int(str(value).strip()))


def _data(node: Node | None) -> object:
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Mapping):
        return {k: _data(v) for k, v in node.items()}
    if isinstance(node, Sequence):
        return [_data(v) for v in node.items]
    return None


def parse(node: Node) -> GpuRequest:
    """The request `resources.gpu` states; GrammarError when dstack would refuse it."""
    value = _data(node)
    if isinstance(value, bool) or value is None:
        raise GrammarError(f"not a GPU request: {value!r}")
    if isinstance(value, int):
        value = str(value)
    if isinstance(value, str):
        return _from_text(value)
    if isinstance(value, dict):
        return _from_mapping(value)
    if isinstance(value, list):
        raise GrammarError("a list is not a GPU request: write the names as `A100,H100` or under `name:`")
    raise GrammarError(f"not a GPU request: {value!r}")


def _from_text(text: str) -> GpuRequest:
    spec: dict[str, Any] = {}
    for token in text.replace(" ", "").split(":"):
        if not token:
            raise GrammarError(f"an empty token in {text!r}")
        vendor = _vendor(token)
        key = (
            "vendor"
            if vendor
            else "names"
            if token[0].isalpha()
            else "memory"
            if any(c.isalpha() for c in token)
            else "count"
        )
        if key in spec:
            raise GrammarError(f"two {key.rstrip('s')} tokens in {text!r}")
        if key == "vendor":
            spec[key] = vendor
        elif key == "names":
            names = tuple(token.split(","))
            if not all(names):
                raise GrammarError(f"an empty GPU name in {text!r}")
            spec[key] = names
        elif key == "memory":
            spec[key] = value_range(token, memory)
        else:
            spec[key] = value_range(token, _count)
    return GpuRequest(**spec)


def _from_mapping(value: dict[str, Any]) -> GpuRequest:
    spec: dict[str, Any] = {}
    if value.get("vendor") is not None:
        vendor = _vendor(str(value["vendor"]))
        if vendor is None:
            raise GrammarError(f"not a vendor dstack knows: {value['vendor']!r}")
        spec["vendor"] = vendor
    names = value.get("name")
    if names is not None:
        spec["names"] = tuple(str(n) for n in (names if isinstance(names, list) else [names]))
    if value.get("count") is not None:
        spec["count"] = value_range(value["count"], _count)
    for key in ("memory", "total_memory"):
        if value.get(key) is not None:
            spec[key] = value_range(value[key], memory)
    cc = value.get("compute_capability")
    if cc is not None:
        parts = str(cc).strip().split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise GrammarError(f"not a compute capability: {cc!r}")
        spec["compute_capability"] = (int(parts[0]), int(parts[1]))
    return GpuRequest(**spec)


def _between(value: float, bounds: tuple[Bound, Bound] | None) -> bool:
    if bounds is None:
        return True
    low, high = bounds
    return (low is None or value >= low) and (high is None or value <= high)


def catalogue() -> list[Card]:
    return [Card(e["name"], float(e["memory"]), e["vendor"], e["id"]) for e in _table()["accelerators"]]


def admitted(req: GpuRequest, image_set: bool) -> list[Card]:
    """The accelerators of gpuhunt's catalogue the request admits (gpuhunt `matches`, per GPU)."""
    from kvlint.catalog import gpus

    vendor = req.vendor
    if vendor is None and req.names is None and not image_set:
        vendor = "nvidia"  # dstack's own image is CUDA only
    names = {n.lower() for n in req.names} if req.names is not None else None
    out: list[Card] = []
    for card in catalogue():
        if vendor is not None and card.vendor != vendor:
            continue
        if names is not None and not _named(card, names):
            continue
        if not _between(card.memory, req.memory):
            continue
        if req.compute_capability is not None:
            spec = gpus.by_id(card.id) if card.id else None
            if (
                spec is None
                or spec.compute_capability is None
                or spec.compute_capability < req.compute_capability
            ):
                continue
        if _count_for(req, card) is None:
            continue
        out.append(card)
    return out


def _named(card: Card, names: set[str]) -> bool:
    """gpuhunt compares names without case (constraints.py:48-52); dstack drops a `tpu-` prefix
    (resources.py:321-337), and a TPU is named with its size (`v5litepod-4`)."""
    names = {n[4:] if n.startswith("tpu-") else n for n in names}
    if card.vendor == "google":
        return any(n.split("-")[0] == card.name.lower() for n in names)
    return card.name.lower() in names


def _count_for(req: GpuRequest, card: Card) -> int | None:
    """The least GPU count of the request's range that this card satisfies `total_memory` with."""
    low, high = req.count
    least = max(1, int(low or 0))
    if req.total_memory is not None and req.total_memory[0] is not None and card.memory:
        least = max(least, math.ceil(req.total_memory[0] / card.memory))
    if high is not None and least > high:
        return None
    if req.total_memory is not None and not _between(least * card.memory, req.total_memory):
        return None
    return least


def least_count(req: GpuRequest, cards: list[Card]) -> int:
    """The GPU count kvlint plans for: the least the request can be given (on any admitted card)."""
    counts = [c for c in (_count_for(req, card) for card in cards) if c is not None]
    return min(counts) if counts else max(1, int(req.count[0] or 0))


def text(bounds: tuple[Bound, Bound], unit: str = "") -> str:
    low, high = bounds
    show = lambda v: "" if v is None else f"{v:g}{unit}"  # noqa: E731
    return show(low) if low == high else f"{show(low)}..{show(high)}"
