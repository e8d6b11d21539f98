"""NIM_TAGS_SELECTOR: the profiles NIM's automatic selection is left to choose from, by their manifest tags.

The variable is a comma-separated list of `tag=value` pairs naming tags of the model manifest's profiles
(the tags list-model-profiles prints with each profile, e.g. docs.nvidia.com/nim/riva/asr/1.3.2/utilities.html,
List Model Profiles: `{'mode': 'all', 'name': ...}`); NVIDIA's own LLM NIM deployments set it to pin the
precision and the TP together: "set `NIM_TAGS_SELECTOR=precision=bf16,tp=1`" (NVIDIA-AI-Blueprints/
nemotron-voice-agent docs/how-to/configure-llm.md @751d609, Deployment tuning parameters, for an A100). kvlint's readings,
said in the plan where they apply: a profile is kept when every pair matches one of its tags (the pairs are
combined with AND, as that pin needs), values compared without regard to case (a manifest's gpu tag is
spelled `H100` in some releases and `h100` in others); a profile without the tag does not match it; and the
selector narrows the automatic selection only (NIM_MODEL_PROFILE names a profile outright).

The tags kvlint's table carries (data/profiles.json `about`), by the manifest's key: llm_engine, precision,
tp, pp, number_of_gpus, profile (throughput, latency, throughput-lora, as the manifest spells it), feat_lora,
trtllm_buildable, gpu, gpu_device. A pair on another tag cannot be matched offline: it is said, not guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

VARIABLE = "NIM_TAGS_SELECTOR"
EXTRA = "nim_tags"  # Deployment.extra: NIM_TAGS_SELECTOR as stated (its text, parsed where it is used)


def _flag(on: bool) -> str:
    return "true" if on else "false"


# the manifest's tag key -> the value a published profile (selection.Published, which reads this module)
# carries for it ('' where it carries none)
TAGS: dict[str, Callable[[Any], str]] = {
    "llm_engine": lambda p: p.backend,
    "precision": lambda p: p.precision,
    "tp": lambda p: str(p.tp),
    "pp": lambda p: str(p.pp),
    "number_of_gpus": lambda p: str(p.gpus),
    "profile": lambda p: p.kind,
    "feat_lora": lambda p: _flag(p.lora),
    "trtllm_buildable": lambda p: _flag(p.buildable),
    "gpu": lambda p: p.gpu_tag,
    "gpu_device": lambda p: p.gpu_device,
}

Pairs = tuple[tuple[str, str], ...]


def parse(text: str) -> Pairs | None:
    """The `tag=value` pairs of the selector as written; None where a part is not one (no `=`, or an empty
    tag or value)."""
    pairs = []
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            return None
        pairs.append((key.strip().lower(), value.strip()))
    return tuple(pairs)


def matches(p: Any, pairs: Pairs) -> bool:
    """Every pair names a tag `p` carries with that value."""
    return all(TAGS[k](p) != "" and TAGS[k](p).lower() == v.lower() for k, v in pairs)


def spelled(pairs: Pairs) -> str:
    return ",".join(f"{k}={v}" for k, v in pairs)


__all__ = ["EXTRA", "TAGS", "VARIABLE", "Pairs", "matches", "parse", "spelled"]
