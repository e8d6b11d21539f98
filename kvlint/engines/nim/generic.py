"""The profile the multi-LLM NIM runs for a model it was not built for: a generic vLLM profile, generated at
start-up for the checkpoint NIM_MODEL_NAME names.

The multi-LLM NIM (`nvcr.io/nim/nvidia/llm-nim`, "LLM-agnostic" in some releases' pages) ships no model: it
writes a manifest of generic profiles for the checkpoint it is given when it starts (docs.nvidia.com/nim/
large-language-models/latest/deployment/model-profiles-and-selection.html: "the model manifest is generated
at runtime with a set of generic profiles"), one per backend, precision and TP, named `<backend>-<precision>-
tp<N>-pp1` (same page, Profile Naming Convention; its list-model-profiles example lists vllm-bf16 at tp1, tp2
and tp4 for one system). A generic profile has no gpu tag (1.12.0/profiles.html: "Generic model profiles can
be identified by the presence of local_build, vllm or sglang in the profile name"), so NIM's preference for
the *optimized* TensorRT-LLM profiles (1.1.0/profiles.html, Automatic Profile Selection) has nothing to act on.

What kvlint assumes, and says in the plan: the vLLM profile. It is the backend NIM's model-free pages name as
the one that bounds what NIM serves ("Regardless of where the model is hosted, if its architecture is
unsupported by vLLM, it will also be unsupported by NIM", 2.0.0/deployment/model-free-nim.html), and the
multi-LLM NIM's support table lists vLLM for base models of nearly every architecture (1.13.0/
supported-architectures.html); which backend a 1.x image picks among generic profiles its pages do not say,
so the plan names the assumption and NIM_MODEL_PROFILE (which selects one) the way to pin it. The precision
is the checkpoint's own (vLLM reads its dtype and quantization config); the TP is NIM_TENSOR_PARALLEL_SIZE
where stated (NIM's variables sit above a profile's tags: 2.0.0/reference/advanced-configuration.html,
Configuration Priority), else each power-of-two TP up to the pod's GPUs is one profile NIM may start, each
planned, kvlint's default the one that uses the most GPUs (planned._default).
"""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment
from kvlint.engines.base import NotPlanned
from kvlint.engines.nim import tags
from kvlint.engines.nim.selection import Published

# the tags a generated profile's name spells (`<backend>-<precision>-tp<N>-pp1`): all a selector can match
TAGS = ("llm_engine", "precision", "tp", "pp")
IMAGES = ("nvidia/llm-nim",)  # the multi-LLM NIM's NGC repository (launch.image_name spelling)
GENERIC = "nim_generic"  # Deployment.extra: "org/name:tag" of a multi-LLM NIM serving NIM_MODEL_NAME's model
ASSUMED = (
    "the multi-LLM NIM generates generic profiles for the checkpoint at start-up and its pages do not say "
    "which backend it picks among them; kvlint plans the vLLM one (docs.nvidia.com/nim/large-language-models/"
    "2.0.0/deployment/model-free-nim.html: an architecture vLLM does not support NIM does not serve); "
    "NIM_MODEL_PROFILE pins one"
)
# a checkpoint's torch dtype -> the precision word of a profile name
PRECISION = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def serves_any_model(name: str | None) -> bool:
    """`name` (launch.image_name) is the multi-LLM NIM, which serves the model NIM_MODEL_NAME names."""
    return name in IMAGES


def precision(arch: Any) -> str:
    """The precision word of the profile NIM generates for the checkpoint (a profile name's words: bf16, fp8,
    mxfp4, nvfp4, model-profiles-and-selection.html above): the quantization's format where it is one of
    those (a compressed-tensors checkpoint of float8 weights is fp8), else its method; else the dtype's."""
    q = arch.quant
    if q is None:
        return PRECISION.get(arch.dtype, arch.dtype)
    said = f"{q.method} {q.scheme}".lower()
    for word, marks in (("nvfp4", ("nvfp4",)), ("mxfp4", ("mxfp4",)), ("fp8", ("fp8", "float8"))):
        if any(m in said for m in marks):
            return word
    return str(q.method)


def profiles(d: Deployment, arch: Any, gpu: Any) -> tuple[tuple[Published, ...], str]:
    """The generic vLLM profiles NIM may start here, and why (the assumption named)."""
    said = d.extra[GENERIC]
    if gpu is None:
        raise NotPlanned()  # the GPU type is not stated: the usual cards are each tried (run/fleet.py)
    word = precision(arch)
    tp = d.tensor_parallel
    pp = int(d.pipeline_parallel.value) if d.pipeline_parallel is not None else 1
    if tp is not None and tp.origin == "stated":
        tps = [int(tp.value)]
        why = f"TP {tp.value} from NIM_TENSOR_PARALLEL_SIZE"
    else:
        count = d.gpus_seen()
        if count is None:
            raise NotPlanned(
                f"the multi-LLM NIM {said.value} picks the TP of its generic profile by the GPUs it finds, and "
                "the pod's GPU count is not stated",
                said.where,
            )
        tps = [t for t in (1, 2, 4, 8, 16) if t * pp <= int(count.value)] or [1]
        why = f"a TP up to the {count.value} GPUs the pod has"
    picked = tuple(
        Published("", "vllm", word, t, pp, t * pp, generated=True) for t in sorted(tps, reverse=True)
    )
    picked, why = _selected(d, picked, why)
    return (
        picked,
        f"generated for {d.model.value if d.model else 'the model'} by {said.value}, {why}; {ASSUMED}",
    )


def _selected(d: Deployment, picked: tuple[Published, ...], why: str) -> tuple[tuple[Published, ...], str]:
    """The generated profiles NIM_TAGS_SELECTOR keeps (every pair matches one of the tags their names spell:
    kvlint's reading, tags.py); a selector none of them matches leaves the profile unknown offline."""
    said = d.extra.get(tags.EXTRA)
    if said is None:
        return picked, why
    pairs = tags.parse(str(said.value)) or ()
    kept = tuple(p for p in picked if tags.matches(p, pairs))
    if not kept:
        names = ", ".join(p.name for p in picked)
        raise NotPlanned(
            f"{tags.VARIABLE} {said.value} matches none of the generic profiles kvlint takes "
            f"{d.extra[GENERIC].value} to generate here ({names}: vLLM at the checkpoint's precision), so which "
            "profile NIM starts is not known offline",
            said.where,
        )
    return (
        kept,
        f"{why}, of which {tags.VARIABLE} {said.value} keeps {len(kept)} (every pair: kvlint's reading)",
    )


__all__ = ["GENERIC", "IMAGES", "TAGS", "precision", "profiles", "serves_any_model"]
