"""The NIM variables that narrow the profile (NIM_TENSOR_PARALLEL_SIZE, NIM_PIPELINE_PARALLEL_SIZE,
NIM_TAGS_SELECTOR) against the profiles the image's release publishes (data/profiles.json).

kvlint reads NIM_TENSOR_PARALLEL_SIZE and NIM_PIPELINE_PARALLEL_SIZE as keeping the profiles of that TP and PP,
and NIM_TAGS_SELECTOR as keeping those whose tags match every pair (selection.py, tags.py: readings of its
own, said in the plan). Variables that leave no profile runnable on the pod's GPUs leave NIM nothing to start:
the release publishes no engine for that layout. A pre-built TensorRT-LLM engine runs at the TP it was built
for (its manifest ships one trtllm_engine/rank<N>.engine file per rank); NIM's variables sit above a profile's
tags (docs.nvidia.com/nim/large-language-models/2.0.0/reference/advanced-configuration.html, Configuration
Priority), so a vLLM profile would be started at the stated TP, a layout the release publishes no profile
for. Which of the two a 1.x image does its pages do not say: the finding is a warning at the variable, naming
what the release does publish for that GPU, and for NIM_TAGS_SELECTOR how many profiles each reading left.
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog import gpus as gpu_catalog
from kvlint.deployment import Deployment
from kvlint.engines.base import Refusal
from kvlint.engines.nim import planned, selection
from kvlint.findings import Severity


def refusal(d: Deployment, in_force: Any) -> Refusal | None:
    """The located finding for NIM variables the release publishes no runnable profile for (KV201 asks)."""
    count = d.gpus_seen()
    gpu = gpu_catalog.lookup(str(in_force.gpu.value)) if in_force.gpu is not None else None
    if count is None or gpu is None or not planned.unpublished(d, gpu, int(count.value)):
        return None
    rel = planned.published(d)
    assert rel is not None
    lora = planned.LORA in d.extra
    runnable = [
        p for p in selection.choose(rel, gpu.id, int(count.value), lora=lora).runnable if p.lora == lora
    ]
    if planned.PP not in d.extra and planned.TAGS not in d.extra:
        return _tp(d, rel, gpu, count, runnable)
    return _narrowed(d, rel, gpu, count, runnable, lora)


def _tp(d: Deployment, rel: Any, gpu: Any, count: Any, runnable: list[Any]) -> Refusal:
    tp = d.extra[planned.TP]
    tps = ", ".join(str(t) for t in sorted({p.tp for p in runnable}))
    return Refusal(
        f"NIM_TENSOR_PARALLEL_SIZE {tp.value}: no profile of {rel.image}:{rel.release} runnable on "
        f"{count.value} x {gpu.name} has TP {tp.value} (those runnable have TP {tps}), so the release has no "
        "engine of that TP to start: a pre-built TensorRT-LLM engine runs only at the TP it was built for, and "
        "a vLLM profile run at another TP is a layout NVIDIA does not publish for this model (NIM's variables "
        "sit above a profile's tags: docs.nvidia.com/nim/large-language-models/2.0.0/reference/"
        "advanced-configuration.html); not planned",
        f"set NIM_TENSOR_PARALLEL_SIZE to a TP {rel.release} publishes for {gpu.name} ({tps}), or leave it out "
        "and let NIM pick",
        (tp,),
        Severity.WARNING,
    )


def _narrowed(d: Deployment, rel: Any, gpu: Any, count: Any, runnable: list[Any], lora: bool) -> Refusal:
    """NIM_PIPELINE_PARALLEL_SIZE or NIM_TAGS_SELECTOR (with NIM_TENSOR_PARALLEL_SIZE where stated)."""
    from kvlint.engines.nim import tags

    said = [(k, d.extra[k]) for k in (planned.TP, planned.PP, planned.TAGS) if k in d.extra]
    names = {planned.TP: "NIM_TENSOR_PARALLEL_SIZE", planned.PP: "NIM_PIPELINE_PARALLEL_SIZE"}
    stated = ", ".join(f"{names.get(k, tags.VARIABLE)} {v.value}" for k, v in said)
    choice = selection.choose(rel, gpu.id, int(count.value), lora=lora, **planned.wanted(d))
    keys = ["tp", "pp", *(k for k, _ in planned.wanted(d)["tags"] if k not in ("tp", "pp"))]
    offered = "; ".join(_values(k, runnable) for k in keys if k in tags.TAGS)
    variables = " and ".join(names.get(k, tags.VARIABLE) for k, _ in said)
    return Refusal(
        f"{stated}: no profile of {rel.image}:{rel.release} runnable on {count.value} x {gpu.name} is left "
        f"({choice.left}), so NIM's selection has no profile to start; those runnable have {offered}; not planned",
        f"set {variables} to what {rel.release} publishes for {gpu.name} ({offered}), or leave "
        f"{'it' if len(said) == 1 else 'them'} out and let NIM pick",
        tuple(v for _, v in said),
        Severity.WARNING,
    )


def runs_at(d: Deployment, gpu: Any, gpus: int, tp: int) -> bool:
    """Whether NIM's selection, with NIM_TENSOR_PARALLEL_SIZE `tp` and the other variables as stated, leaves
    a published profile runnable on `gpus` of `gpu` (a NIM_TAGS_SELECTOR pinning another tp leaves none)."""
    rel = planned.published(d)
    if rel is None or gpu is None or planned.FIXED in d.extra:
        return False
    asked = {**planned.wanted(d), "tp": tp}
    return bool(selection.choose(rel, gpu.id, gpus, lora=planned.LORA in d.extra, **asked).picked)


def _values(key: str, runnable: list[Any]) -> str:
    """The values the runnable profiles carry for tag `key` ('no such tag' for those that carry none)."""
    from kvlint.engines.nim import tags

    found = {tags.TAGS[key](p) for p in runnable}
    values = sorted(found - {""}) + (["no such tag"] if "" in found else [])
    return f"{key} {', '.join(values)}"


__all__ = ["refusal", "runs_at"]
