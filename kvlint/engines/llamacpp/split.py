"""How llama-server spreads one model over the GPUs its container sees: --split-mode, --tensor-split, --main-gpu.

llama.cpp uses every GPU it finds (ollama/ollama@v0.15.5 llama/llama.cpp/src/llama.cpp:896-897, llama.cpp
ec98e2002 vendored): the NVIDIA device plugin shows a container the GPUs its pod requests, so the count is
the pod's. `--split-mode layer` (the default, common/common.h:339) gives each GPU whole layers, with their
KV cache; `none` keeps only `--main-gpu` (src/llama.cpp:905-918: an index past the last GPU is "invalid value
for main_gpu" and the model does not load); `row` also splits each weight matrix by rows over every GPU
(src/llama-model.cpp:383-405, the split buffer type), which kvlint plans as the layer split (said).
devices.py says where each layer goes; multi.py plans each GPU's buffers.
"""

from __future__ import annotations

from typing import Any

from kvlint.deployment import default
from kvlint.engines.base import SettingRefused
from kvlint.engines.filling import Filling
from kvlint.engines.llamacpp.devices import parse_split

MODES = ("none", "layer", "row")
PLACED_BY = "llama.cpp splits the layers over the GPUs it sees"


def visible(f: Filling) -> int:
    """The GPUs the container sees (its pod's; one when unknown)."""
    gpus = f.d.gpus_seen()
    return int(gpus.value) if gpus is not None and isinstance(gpus.value, int) and gpus.value > 1 else 1


def settings(f: Filling) -> dict[str, Any]:
    """`n_devices`, `tensor_split` (one share per GPU; None: by free memory) and `split_how` for the plan; on
    more than one GPU, the pipeline-parallel size in force is their count (the layer split is a pipeline)."""
    seen = visible(f)
    if seen == 1:
        return {"n_devices": 1}
    said = f.options.get("split_mode")
    text = str(said.value) if said is not None else "layer"
    mode = text.strip().lower()
    where = (said.where if said is not None else None) or f.d.where
    if mode not in MODES:
        raise SettingRefused(f"llama.cpp: --split-mode {text!r} is not one of {', '.join(MODES)}", where)
    main = f.options.get("main_gpu")
    main_gpu = int(main.value) if main is not None and isinstance(main.value, int) else 0
    if mode == "none":
        if not 0 <= main_gpu < seen:
            raise SettingRefused(
                f"llama.cpp: --main-gpu {main_gpu} with {seen} GPUs: llama_model_load_from_file fails ('invalid"
                " value for main_gpu', src/llama.cpp:910-913 at ec98e2002)",
                (main.where if main is not None else None) or where,
            )
        return {"n_devices": 1}
    shares = _shares(f, seen)
    how = (
        f"--tensor-split {f.options['tensor_split'].value}"
        if shares
        else f"by free memory (src/llama-model.cpp:2370-2376), which kvlint takes as equal on {seen} GPUs of one type"
    )
    if mode == "row":
        how += "; --split-mode row also splits each weight matrix by rows, planned as the layer split"
    if f.pipeline_parallel is None:
        f.pipeline_parallel = default(seen, f"{PLACED_BY} (--split-mode {mode}): {seen} GPUs")
    return {
        "n_devices": seen,
        "tensor_split": shares,
        "layer_split": mode == "layer",  # the pipeline's condition (compute.py pipelined)
        "split_how": f"layers split over {seen} GPUs {how}",
    }


def spread_by_ollama(f: Filling, counts: list[int]) -> dict[str, Any]:
    """The settings of a model Ollama's scheduler spreads over several GPUs (ollama_gpus.py): its runner
    gives llama.cpp those GPUs, their layer counts as the split and their sum as -ngl."""
    seen, k = visible(f), len(counts)
    if f.pipeline_parallel is None:
        f.pipeline_parallel = default(
            k, f"Ollama's scheduler spreads the layers over {k} GPUs (llm/server.go:1063-1135)"
        )
    of = f" of {seen}" if seen > k else ""
    return {
        "n_devices": k,
        "tensor_split": [float(c) for c in counts],
        "ngl": sum(counts),
        "layer_split": True,  # the runner sets no split mode: llama.cpp's default, layer (llama/llama.go:260-295)
        "split_how": f"Ollama's scheduler spreads the layers over {k}{of} GPUs ({', '.join(map(str, counts))} layers:"
        " the fewest that hold them, balanced; llm/server.go:1063-1160)",
    }


def _shares(f: Filling, seen: int) -> list[float] | None:
    said = f.options.get("tensor_split")
    if said is None:
        return None
    shares = parse_split(str(said.value), seen)
    if shares is None:
        raise SettingRefused(
            f"llama.cpp: --tensor-split {said.value!r} is not a list of shares (N0,N1,...)",
            said.where or f.d.where,
        )
    return shares if any(shares) else None  # all zero: llama.cpp's default split (llama-model.cpp:2367)


__all__ = ["settings", "spread_by_ollama", "visible"]
