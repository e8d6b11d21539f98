"""Which GPU holds each layer when llama.cpp sees more than one, and what each GPU allocates (multi.py plans it).

From the llama.cpp Ollama vendors (ollama/ollama@v0.15.5 llama/llama.cpp, llama.cpp ec98e2002):
- devices: every GPU it finds (src/llama.cpp:896-897); `--split-mode none` keeps only `--main-gpu` (:905-918).
- split points: `--tensor-split` when any share is non-zero, else each device's free memory
  (src/llama-model.cpp:2366-2380); summed and normalised into cumulative points (:2382-2390).
- layers: with `i_gpu_start = max(n_layer - n_gpu_layers, 0)` and `act_gpu_layers = min(n_gpu_layers,
  n_layer + 1)`, layer `il` goes to the CPU outside [i_gpu_start, i_gpu_start + act_gpu_layers), else to
  device `upper_bound(splits, float(il - i_gpu_start) / act_gpu_layers)` (:2396-2404); the output layer is
  placed the same way as layer `n_layer` (:2420-2421); token_embd stays on the CPU (:2411).
- KV cache: each layer's K and V go to its layer's device (src/llama-kv-cache.cpp:119-121), one buffer per
  device ("CUDA1 KV buffer size", :186-191).
The arithmetic is float32, as in llama.cpp (`std::vector<float> splits`).
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Sequence

from kvlint.record import record


def _f32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


def split_points(shares: Sequence[float]) -> list[float]:
    """The cumulative, normalised split points (llama-model.cpp:2382-2390), in float32."""
    points, total = [], 0.0
    for share in shares:
        total = _f32(total + _f32(share))
        points.append(total)
    return [_f32(p / total) for p in points]


def device_of(il: int, n_layer: int, n_gpu_layers: int, points: Sequence[float]) -> int | None:
    """The device of layer `il` (`il == n_layer`: the output layer), None for the CPU."""
    i_gpu_start = max(n_layer - n_gpu_layers, 0)
    act = min(n_gpu_layers, n_layer + 1) if points else 0
    if il < i_gpu_start or il - i_gpu_start >= act:
        return None
    at = _f32(_f32(float(il - i_gpu_start)) / act)
    return min(bisect.bisect_right(points, at), len(points) - 1)


@record(frozen=True)
class Share:
    """What one device holds: its repeating layers, whether the output layer, and their bytes."""

    device: int
    layers: int
    output: bool
    weights: int
    kv: int


def shares(
    layer_bytes: Sequence[int],
    output_bytes: int,
    kv_bytes: Sequence[int],
    n_gpu_layers: int,
    points: Sequence[float],
) -> list[Share]:
    """Each device's layers, weights and KV cache (`kv_bytes` empty: the cache stays on the CPU, -nkvo)."""
    n_layer = len(layer_bytes)
    layers = [0] * len(points)
    weights = [0] * len(points)
    kv = [0] * len(points)
    for il in range(n_layer):
        dev = device_of(il, n_layer, n_gpu_layers, points)
        if dev is None:
            continue
        layers[dev] += 1
        weights[dev] += layer_bytes[il]
        kv[dev] += kv_bytes[il] if kv_bytes else 0
    out = device_of(n_layer, n_layer, n_gpu_layers, points)
    if out is not None:
        weights[out] += output_bytes
    return [Share(i, layers[i], out == i, weights[i], kv[i]) for i in range(len(points))]


def parse_split(text: str, n_devices: int) -> list[float] | None:
    """`--tensor-split 10,6` (or `3/1`: common/arg.cpp splits on `,` and `/`) -> one share per device (the
    missing ones 0, those past the last device dropped: load_tensors reads n_devices of them); None when it
    is not a list of non-negative numbers. All zero is llama.cpp's default, the free-memory split."""
    parts = [p.strip() for p in text.replace("/", ",").split(",") if p.strip()]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        return None
    if not values or any(v < 0 or v != v for v in values):
        return None
    return (values + [0.0] * n_devices)[:n_devices]


__all__ = ["Share", "device_of", "parse_split", "shares", "split_points"]
