"""Exact weight bytes from safetensors headers: an 8-byte little-endian length, then a JSON header.

Only the header is read, never a tensor. Each tensor is priced by the bytes it occupies in the file
(`data_offsets`), which is its stored dtype times its element count: packed int4/fp4 weights stored
as U8/I32, scales, zero points and global scales are all counted as stored. The header is checked
against itself (offsets inside the data, size = dtype x shape) so a damaged file is reported, not summed.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

from kvlint.catalog.hf_keys import ConfigError
from kvlint.fileio import shown

MAX_HEADER_BYTES = 64 * 1024 * 1024  # real headers are well under 10 MB; more is not a safetensors file
MAX_INDEX_BYTES = 64 * 1024 * 1024  # model.safetensors.index.json: one line per tensor name
# safetensors dtype names -> bytes per element (safetensors/src/tensor.rs Dtype::bitsize / 8)
DTYPE_BYTES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "F8_E8M0": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
}


def parse_header(raw: bytes, name: str) -> dict[str, Any]:
    """The JSON header from the first bytes of a safetensors file (the 8-byte length included)."""
    if len(raw) < 8:
        raise ConfigError(f"{name}: shorter than a safetensors header")
    (length,) = struct.unpack("<Q", raw[:8])
    if length > MAX_HEADER_BYTES:
        raise ConfigError(
            f"{name}: header length {length:,} B is over {MAX_HEADER_BYTES:,} B; not a safetensors file"
        )
    if len(raw) < 8 + length:
        raise ConfigError(f"{name}: header is cut short ({len(raw) - 8:,} of {length:,} B)")
    return _json_object(raw[8 : 8 + length], f"{name}: header")


def header_length(first8: bytes) -> int:
    """How many bytes to fetch after the first 8 to have the whole header."""
    (length,) = struct.unpack("<Q", first8[:8])
    return int(length)


def tensor_bytes(header: dict[str, Any], name: str, data_size: int | None = None) -> int:
    """Bytes of every tensor as stored, checked against dtype x shape and the data that follows."""
    total = 0
    for tensor, info in header.items():
        if tensor == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise ConfigError(f"{name}: tensor {tensor!r} has no description")
        offsets, shape, dtype = info.get("data_offsets"), info.get("shape"), info.get("dtype")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
            raise ConfigError(f"{name}: tensor {tensor!r} has unreadable data_offsets {offsets!r}")
        start, end = int(offsets[0]), int(offsets[1])
        if start < 0 or end < start:
            raise ConfigError(f"{name}: tensor {tensor!r} has unreadable data_offsets {offsets!r}")
        size = end - start
        if (
            dtype in DTYPE_BYTES
            and isinstance(shape, list)
            and all(isinstance(d, int) and d >= 0 for d in shape)
        ):
            count = 1
            for dim in shape:
                count *= dim
            if count * DTYPE_BYTES[dtype] != size:
                raise ConfigError(
                    f"{name}: tensor {tensor!r} is {size:,} B but {dtype} x {shape} is {count * DTYPE_BYTES[dtype]:,} B"
                )
        if data_size is not None and end > data_size:
            raise ConfigError(f"{name}: tensor {tensor!r} ends past the end of the file")
        total += size
    return total


def read_file_header(path: str) -> tuple[dict[str, Any], int]:
    """(header, bytes of data after it) of a local safetensors file; only the header is read."""
    from kvlint.fileio import open_regular

    with open_regular(path) as fh:  # a FIFO or device named like a shard is refused, never waited on
        size = os.fstat(fh.fileno()).st_size
        first = fh.read(8)
        if len(first) < 8:
            raise ConfigError(f"{path}: shorter than a safetensors header")
        length = header_length(first)
        if length > MAX_HEADER_BYTES or length > size - 8:
            raise ConfigError(f"{path}: header length {length:,} B does not fit the file ({size:,} B)")
        raw = first + fh.read(length)
    return parse_header(raw, path), size - 8 - length


def _json_object(data: bytes, name: str) -> dict[str, Any]:
    """A JSON object from a checkpoint file; ConfigError for anything else (a list, 100k-deep nesting)."""
    try:
        value = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ConfigError(f"{name}: JSON nested too deeply to read") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{name}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{name}: not a JSON object (a {type(value).__name__})")
    return value


def shard_names(directory: str) -> list[str] | None:
    """The checkpoint's safetensors files: the index's weight_map, or the lone model.safetensors."""
    index = os.path.join(directory, "model.safetensors.index.json")
    if os.path.isfile(index):
        from kvlint.fileio import read_regular

        weight_map = _json_object(read_regular(index, MAX_INDEX_BYTES), index).get("weight_map")
        if not isinstance(weight_map, dict):
            return None
        return sorted({str(v) for v in weight_map.values()})
    single = os.path.join(directory, "model.safetensors")
    return ["model.safetensors"] if os.path.isfile(single) else None


def checkpoint_bytes(directory: str) -> tuple[int, str] | None:
    """Exact stored weight bytes of a local checkpoint from its headers; None when a shard is absent."""
    names = shard_names(directory)
    if not names:
        return None
    total = 0
    for name in names:
        path = os.path.join(directory, name)
        if os.path.dirname(os.path.normpath(name)) or not os.path.isfile(path):
            return None  # a shard kvlint cannot read locally (not downloaded, or outside the directory)
        header, data = read_file_header(path)
        total += tensor_bytes(header, path, data)
    what = "model.safetensors" if names == ["model.safetensors"] else f"{len(names)} safetensors shards"
    return total, f"safetensors headers of {what} in {shown(directory)} (every tensor at its stored dtype)"
