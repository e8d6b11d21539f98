"""A NIM model profile as NIM_MODEL_PROFILE names it: its backend, precision and parallelism.

A profile's descriptive name carries its tags: `<backend>-[<gpu>-][trtllm_buildable-]<precision>-tp<N>
[-pp<M>][-throughput|-latency][-lora]` (`tensorrt_llm-h100-fp8-tp2-throughput`, `vllm-bf16-tp1`); TP x PP is
the GPU count it needs (docs.nvidia.com/nim/large-language-models/1.12.0/configuration.html "How many GPUs
do I need?"; names as list-model-profiles prints them, docs.nvidia.com/nim/large-language-models/1.1.0/
profiles.html). A profile id (64 hex digits) says none of this by itself.
"""

from __future__ import annotations

import re

from kvlint.record import record

_NAME = re.compile(
    r"^(?P<backend>tensorrt_llm|vllm|sglang)-(?:(?P<gpu>[a-z0-9_]+?)-)?(?:trtllm_buildable-)?"
    r"(?P<precision>fp16|bf16|fp8|nvfp4|mxfp4|int4_awq|int8_wo|int4_wo)-tp(?P<tp>\d+)(?:-pp(?P<pp>\d+))?"
    r"(?:-(?P<kind>throughput|latency))?(?:-(?:feat_)?lora)?$"
)
PROFILE_ID = re.compile(r"^[0-9a-f]{64}$")
BACKENDS = {"tensorrt_llm": "TensorRT-LLM", "vllm": "vLLM", "sglang": "SGLang"}
# the kvlint engine that plans each backend (the registry names)
ENGINE_OF = {"tensorrt_llm": "trtllm", "vllm": "vllm", "sglang": "sglang"}


@record(frozen=True)
class Profile:
    name: str
    backend: str  # tensorrt_llm | vllm | sglang
    precision: str
    tp: int
    pp: int = 1
    gpu: str = ""  # the GPU an optimized profile is built for ('' for a generic one)


def parse(text: str) -> Profile | None:
    """The profile a descriptive name spells; None for an id or anything else."""
    m = _NAME.match(text.strip().lower())
    if not m:
        return None
    return Profile(
        text.strip(),
        m["backend"],
        m["precision"],
        int(m["tp"]),
        int(m["pp"] or 1),
        m["gpu"] or "",
    )
