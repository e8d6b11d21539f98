"""kvlint's own serving spec: a few lines of YAML naming the model, the GPU and the limits.

    kind: ServingSpec            # optional when every top-level key is one of these
    name: llama-8b-on-l4
    model: meta-llama/Llama-3.1-8B-Instruct   # catalog id, or a path to config.json / its directory
    gpu: L4
    max_context: 131072
    max_sequences: 64
    budget:                      # the author's own planning figures, which kvlint checks
      gpu_memory: 24GB
      kv_per_token: 128KiB

Validated with pydantic; every problem is a located KV001 finding naming the key and the range.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from kvlint import engines
from kvlint.bounds import ARCHITECTURE, BUDGET, Range, show
from kvlint.bounds import FIELDS as BOUNDED
from kvlint.codes import INVALID_INPUT
from kvlint.deployment import Deployment, Value, stated
from kvlint.findings import Issue, Location
from kvlint.load.tree import Mapping, Node, Scalar, Sequence, to_plain
from kvlint.units import parse_count, parse_size


def _count(v: Any) -> Any:
    if v is None or isinstance(v, bool):
        return v
    try:
        return parse_count(v).value
    except ValueError as exc:
        raise ValueError(str(exc)) from None


def _size(v: Any) -> Any:
    if v is None:
        return v
    try:
        return parse_size(v)
    except (ValueError, ArithmeticError) as exc:
        raise ValueError(str(exc)) from None


def _params(v: Any) -> Any:
    """Parameter counts: 8030261248, 8.03e9, "8.03B", "70B", "494M"."""
    try:
        if isinstance(v, str):
            t = v.strip().replace("_", "").replace(",", "")
            mult = {"b": 10**9, "m": 10**6, "k": 10**3, "t": 10**12}.get(t[-1:].lower())
            v = float(t[:-1]) * mult if mult else float(t)
        if isinstance(v, float):
            return int(v)  # inf and nan raise here, not later
    except (ValueError, OverflowError):
        raise ValueError(
            f"cannot read {str(v)[:40]!r} as a finite parameter count (use 8.03B, 70e9 or 8030261248)"
        ) from None
    return v


def _within(r: Range) -> Any:
    """The pydantic constraint for one entry of the bounds table (kvlint/bounds.py)."""
    if r.integer:
        return Field(ge=int(r.lo), le=int(r.hi))
    if r.lo_open:
        return Field(gt=r.lo, le=r.hi, allow_inf_nan=False)
    return Field(ge=r.lo, le=r.hi, allow_inf_nan=False)


def _tok(r: Range) -> Any:
    return Annotated[int, BeforeValidator(_count), _within(r)]


def _int(r: Range) -> Any:
    return Annotated[int, _within(r)]


SizeField = Annotated[Any, BeforeValidator(_size)]
A, F = ARCHITECTURE, BOUNDED


class Architecture(BaseModel):
    model_config = ConfigDict(extra="forbid")
    params: Annotated[int | None, BeforeValidator(_params), _within(A["params"])] = None
    layers: _int(A["layers"]) | None = None
    query_heads: _int(A["query_heads"]) | None = None
    kv_heads: _int(A["kv_heads"]) | None = None
    head_dim: _int(A["head_dim"]) | None = None
    hidden_size: _int(A["hidden_size"]) | None = None
    intermediate_size: _int(A["intermediate_size"]) | None = None
    vocab_size: _int(A["vocab_size"]) | None = None
    max_positions: _tok(A["max_positions"]) | None = None
    sliding_window: _tok(A["sliding_window"]) | None = None
    dtype: str | None = None


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gpu_memory: SizeField = None
    weights: SizeField = None
    kv_per_token: SizeField = None
    kv_per_sequence: SizeField = None
    kv_cache: SizeField = None
    reserved: SizeField = None
    activations: SizeField = None
    max_concurrency: Annotated[float | None, _within(BUDGET["max_concurrency"])] = None
    fragmentation: Annotated[float | None, _within(BUDGET["fragmentation"])] = None


class ServingSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    apiVersion: str | None = None
    kind: str | None = None
    name: str | None = None
    engine: str = engines.DEFAULT
    engine_version: str | None = None
    model: str
    gpu: str
    gpus: _int(Range("GPU count", 1, F["gpus"].hi)) | None = None
    tensor_parallel: _int(F["tensor_parallel"]) | None = None
    pipeline_parallel: _int(F["pipeline_parallel"]) | None = None
    data_parallel: _int(F["data_parallel"]) | None = None
    max_context: _tok(F["max_context"]) | None = None
    max_sequences: _tok(F["max_sequences"]) | None = None
    max_batched_tokens: _tok(F["max_batched_tokens"]) | None = None
    dtype: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    gpu_memory_utilization: Annotated[float | None, _within(F["gpu_memory_utilization"])] = None
    block_size: _int(F["block_size"]) | None = None
    enforce_eager: bool | None = None
    hybrid_kv_cache_manager: bool | None = None
    architecture: Architecture | None = None
    budget: Budget | None = None

    @field_validator("engine")
    @classmethod
    def _engine(cls, v: str) -> str:
        v = v.strip().lower()
        if not engines.known(v):
            raise ValueError(f"engine must be one of {', '.join(engines.names())} (got {v!r})")
        return v

    @field_validator("engine_version", "name", "model", "gpu", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


FIELDS = set(ServingSpec.model_fields)
SUB_FIELDS = {"architecture": set(Architecture.model_fields), "budget": set(Budget.model_fields)}
_RANGES = {key: r.describe() for key, r in (*ARCHITECTURE.items(), *BUDGET.items(), *BOUNDED.items())}


def _node_at(root: Mapping, loc: tuple) -> tuple[Node, bool]:
    """The deepest node on the pydantic error path, and whether the last step was a missing key."""
    node: Node = root
    for step in loc:
        if isinstance(node, Mapping) and isinstance(step, str) and step in node.values:
            node = node.values[step]
        elif isinstance(node, Sequence) and isinstance(step, int) and 0 <= step < len(node.items):
            node = node.items[step]
        else:
            return node, True
    return node, False


def _key_node(root: Mapping, loc: tuple) -> Node | None:
    parent, _ = _node_at(root, loc[:-1])
    if isinstance(parent, Mapping) and isinstance(loc[-1], str):
        return parent.keys.get(loc[-1])
    return None


def _issues(exc: ValidationError, root: Mapping, path: str) -> list[Issue]:
    out: list[Issue] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        dotted = ".".join(str(p) for p in loc)
        kind = err["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1])
            allowed = SUB_FIELDS.get(str(loc[0]), FIELDS) if len(loc) > 1 else FIELDS
            close = difflib.get_close_matches(key, sorted(allowed), n=1)
            node = _key_node(root, loc) or _node_at(root, loc)[0]
            hint = f"; did you mean {close[0]!r}?" if close else ""
            out.append(
                Issue(
                    INVALID_INPUT,
                    f"unknown key {dotted!r} in ServingSpec{hint}",
                    node.where(path),
                    fix=f"rename it to {close[0]!r}"
                    if close
                    else f"remove it (keys: {', '.join(sorted(allowed))})",
                )
            )
            continue
        node, missing = _node_at(root, loc)
        if kind == "missing":
            out.append(
                Issue(
                    INVALID_INPUT, f"ServingSpec needs {dotted!r}", node.where(path), fix=f"add `{loc[-1]}:`"
                )
            )
            continue
        given = node.text if isinstance(node, Scalar) and not missing else None
        msg = err["msg"].removeprefix("Value error, ")
        what = _RANGES.get(str(loc[-1]))
        text = f"{dotted}: {msg}" + (f" (given {show(given, 60)!r})" if given is not None else "")
        if what and "range" not in msg:
            text += f"; expected {what}"
        out.append(Issue(INVALID_INPUT, text, node.where(path)))
    return out


def extract(root: Mapping, path: str, base_dir: str) -> tuple[list[Deployment], list[Issue]]:
    where = root.where(path)
    try:
        data = to_plain(root)
    except ValueError:
        return [], [Issue(INVALID_INPUT, "ServingSpec is too large to read", where)]
    try:
        spec = ServingSpec.model_validate(data)
    except ValidationError as exc:
        return [], _issues(exc, root, path)

    def loc(*keys: str) -> Location | None:
        node = root.at(*keys)
        return node.where(path) if node is not None else None

    def val(value: Any, *keys: str) -> Value | None:
        return None if value is None else stated(value, loc(*keys))

    d = Deployment(file=path, where=where, kind="ServingSpec", name=spec.name or "", base_dir=base_dir)
    d.engine = stated(spec.engine, loc("engine")) if "engine" in root else None
    d.engine_version = val(spec.engine_version, "engine_version")
    d.model = stated(spec.model, loc("model"))
    d.gpu = stated(spec.gpu, loc("gpu"))
    d.gpus = val(spec.gpus, "gpus")
    d.tensor_parallel = val(spec.tensor_parallel, "tensor_parallel")
    d.pipeline_parallel = val(spec.pipeline_parallel, "pipeline_parallel")
    d.data_parallel = val(spec.data_parallel, "data_parallel")
    d.max_context = val(spec.max_context, "max_context")
    d.max_sequences = val(spec.max_sequences, "max_sequences")
    d.max_batched_tokens = val(spec.max_batched_tokens, "max_batched_tokens")
    d.dtype = val(spec.dtype, "dtype")
    d.quantization = val(spec.quantization, "quantization")
    d.kv_cache_dtype = val(spec.kv_cache_dtype, "kv_cache_dtype")
    d.gpu_memory_utilization = val(spec.gpu_memory_utilization, "gpu_memory_utilization")
    d.block_size = val(spec.block_size, "block_size")
    d.enforce_eager = val(spec.enforce_eager, "enforce_eager")
    d.hybrid_kv_cache_manager = val(spec.hybrid_kv_cache_manager, "hybrid_kv_cache_manager")
    d.args_where = where
    d.args_end = loc("model")
    for key in (
        "max_context",
        "max_batched_tokens",
    ):  # "32k" read as vLLM reads it: KV304 asks which was meant
        node = root.scalar(key)
        if node is not None and isinstance(node.value, str) and node.value.strip()[-1:].isalpha():
            d.suffixes[key] = (node.value.strip(), node.where(path))
    if spec.architecture is not None:
        for key in sorted(spec.architecture.model_fields_set):
            value = getattr(spec.architecture, key)
            if value is not None:
                d.architecture[key] = stated(value, loc("architecture", key))
    if spec.budget is not None:
        for key in sorted(spec.budget.model_fields_set):
            value = getattr(spec.budget, key)
            if value is None:
                continue
            if key == "fragmentation":
                d.fragmentation = stated(value, loc("budget", key))
            else:
                d.budget[key] = stated(value, loc("budget", key))
    return [d], []
