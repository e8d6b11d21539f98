"""NIM_TENSOR_PARALLEL_SIZE against the profiles the image's release publishes (data/profiles.json).

kvlint reads NIM_TENSOR_PARALLEL_SIZE as keeping the profiles of that TP (selection.py, a reading of its own,
said in the plan). A TP no profile runnable on the pod's GPUs has leaves NIM nothing of that TP to start: the
release publishes no engine for it. A pre-built TensorRT-LLM engine runs at the TP it was built for (its
manifest ships one trtllm_engine/rank<N>.engine file per rank); NIM's variables sit above a profile's tags
(docs.nvidia.com/nim/large-language-models/2.0.0/reference/advanced-configuration.html, Configuration
Priority), so a vLLM profile would be started at the stated TP, a layout the release publishes no profile
for. Which of the two a 1.x image does its pages do not say: the finding is a warning at the variable, naming
the TPs the release does publish for that GPU.
"""

from __future__ import annotations

from typing import Any

from kvlint.catalog import gpus as gpu_catalog
from kvlint.deployment import Deployment
from kvlint.engines.base import Refusal
from kvlint.engines.nim import planned, selection
from kvlint.findings import Severity


def refusal(d: Deployment, in_force: Any) -> Refusal | None:
    """The located finding for a TP the release publishes no runnable profile of (KV201 asks)."""
    count = d.gpus_per_pod or d.gpus
    gpu = gpu_catalog.lookup(str(in_force.gpu.value)) if in_force.gpu is not None else None
    if count is None or gpu is None or not planned.unpublished_tp(d, gpu, int(count.value)):
        return None
    rel, tp = planned.published(d), d.extra[planned.TP]
    assert rel is not None
    lora = planned.LORA in d.extra
    runnable = selection.choose(rel, gpu.id, int(count.value), None, lora).runnable
    tps = ", ".join(str(t) for t in sorted({p.tp for p in runnable if p.lora == lora}))
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


__all__ = ["refusal"]
