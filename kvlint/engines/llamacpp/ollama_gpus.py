"""How Ollama's scheduler spreads a model over the GPUs of its pod (ollama/ollama@v0.15.5 llm/server.go).

Ollama sizes each layer (its weights and KV cache; the output layer is the last, llm/server.go:942-951) and
each GPU's room (its free memory less the graph reserve every GPU it uses gets, :613-635, and
OLLAMA_GPU_OVERHEAD, :968), then packs the layers onto the fewest GPUs that hold them all (assignLayers,
:1063-1099: GPU 0 alone, then 0-1, ...), balanced by the smallest share of each GPU's room that still holds
as many (findBestFit, :1101-1135), filling from the last layer back, spilling to the previous GPU when one
is full (greedyFit, :1137-1160). Its runner hands llama.cpp only the GPUs that got layers, with their layer
counts as --tensor-split (runner/llamarunner/runner.go:907-927).

kvlint sizes the layers and the graph reserve by its own accounting (fit.py, compute.py), takes every GPU of
the pod as equally free, and searches the share to 1e-6 as Ollama does. Earlier releases also take the fewest
GPUs that hold the model (v0.12.0 llm/memory.go:29-30 pickBestFullFitByLibrary, "Try to pack into as few GPUs
as possible") but deal the layers out round-robin (estimateGPULayers), so on the GPUs chosen their layer
counts may differ from this balance by a layer.
"""

from __future__ import annotations

from collections.abc import Sequence


def _greedy(sizes: Sequence[int], rooms: Sequence[int], share: float) -> list[int]:
    """greedyFit: the layers each GPU takes, from the last layer back, at `share` of each GPU's room."""
    counts = [0] * len(rooms)
    device = len(rooms) - 1
    free = int(rooms[device] * share)
    for size in reversed(sizes):
        while size > free:
            device -= 1
            if device < 0:
                return counts
            free = int(rooms[device] * share)
        counts[device] += 1
        free -= size
    return counts


def best_fit(sizes: Sequence[int], rooms: Sequence[int]) -> list[int]:
    """findBestFit on GPUs of one speed: the smallest share of every room that holds as many layers as the
    whole rooms do, which balances them."""
    best = _greedy(sizes, rooms, 1.0)
    most, low, high = sum(best), 0.0, 1.0
    while high - low > 1e-6:
        mid = (low + high) / 2
        counts = _greedy(sizes, rooms, mid)
        if sum(counts) == most:
            high, best = mid, counts
        else:
            low = mid
    return best


def spread(sizes: Sequence[int], room: int, n_gpus: int, first: int = 1) -> list[int]:
    """The layers each GPU gets: on the fewest of `n_gpus` GPUs (of `room` bytes each, from `first` of them)
    that hold them all, else on all of them with the rest left on the CPU (assignLayers, without
    OLLAMA_SCHED_SPREAD)."""
    counts: list[int] = []
    for k in range(first, n_gpus + 1):
        counts = best_fit(sizes, [room] * k)
        if sum(counts) == len(sizes):
            return counts
    return counts


__all__ = ["best_fit", "spread"]
