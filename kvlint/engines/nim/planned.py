"""NIM's settings and plan under the profile it runs, planned by that profile's backend engine.

Where the image's profiles are published (data/profiles.json, selection.py), the profile is the one
NIM_MODEL_PROFILE names, else the one NIM's automatic selection leaves for the GPU type and count; its tags
(TP, PP, precision) go to the backend as the settings NIM starts it with, below what the NIM_* variables
state (docs.nvidia.com/nim/large-language-models/2.0.0/reference/advanced-configuration.html, Configuration
Priority). A TensorRT-LLM profile of these releases is a pre-built engine (its manifest ships
trtllm_engine/rank*.engine files; 1.12.0/profiles.html: "LLM-specific NIMs download pre-compiled TensorRT-LLM
engines for optimized profiles"): TensorRT-LLM's engine path (`--backend trt`), planned by kvlint/engines/trtllm.
NIM_PASSTHROUGH_ARGS is a vLLM command line (2.0.0/reference/advanced-configuration.html, Passthrough
Arguments: "parsed as CLI-style arguments", vLLM's CLI format): a TensorRT-LLM profile does not take it, so
what it states is left out of that profile's settings, and the plan says which (`passed_over`).
When NIM may start several profiles (its documented order leaves a tie, e.g. a throughput and a latency
profile), each is planned: kvlint's default is the one that uses the most of the pod's GPUs, named as a default
with each other profile's KV cache and whether one sequence of the context fits it.
"""

from __future__ import annotations

from typing import Any

from kvlint import engines
from kvlint.deployment import Deployment, Value, inferred
from kvlint.engines.base import NotPlanned
from kvlint.engines.nim import env as nim_env
from kvlint.engines.nim import generic, selection, tags
from kvlint.engines.nim.profiles import BACKENDS, ENGINE_OF
from kvlint.record import fields, replace
from kvlint.units import tokens

RELEASE = "nim_release"  # Deployment.extra: "org/name:tag", the image release whose profiles are read
FIXED = "nim_profile_id"  # Deployment.extra: the published profile NIM_MODEL_PROFILE names
NAMED = (
    "nim_profile_named"  # Deployment.extra: a TensorRT-LLM profile NIM_MODEL_PROFILE names, no list at hand
)
LORA = "nim_lora"  # Deployment.extra: the file serves adapters (NIM_PEFT_SOURCE)
TP = "nim_tp"  # Deployment.extra: NIM_TENSOR_PARALLEL_SIZE as stated
PP = "nim_pp"  # Deployment.extra: NIM_PIPELINE_PARALLEL_SIZE as stated
TAGS = tags.EXTRA  # Deployment.extra: NIM_TAGS_SELECTOR as stated (its text; tags.parse reads it)
RUNS = "nim_runs"  # EngineSettings.extra: the id of the published profile the settings run ('' for none)
# a profile's precision -> the Deployment field its backend takes it in, and the value
HALF = {"fp16": ("dtype", "float16"), "bf16": ("dtype", "bfloat16")}
QUANT = {"int8wo": "int8_wo"}  # TensorRT-LLM's QuantAlgo spelling of a manifest's precision word


def applies(d: Deployment) -> bool:
    """The profile is settled here: a published list, a TensorRT-LLM profile named, or the generic profiles
    the multi-LLM NIM generates (generic.py)."""
    return published(d) is not None or NAMED in d.extra or generic.GENERIC in d.extra


def published(d: Deployment) -> selection.Release | None:
    said = d.extra.get(RELEASE)
    if said is None:
        return None
    image, _, tag = str(said.value).partition(":")
    return selection.release_of(image, tag)


def settings(d: Deployment, arch: Any, gpu: Any) -> Any:
    """The settings of the profile NIM runs, planned by its backend (engine `nim`, the backend in
    `extra["nim_backend"]`, what kvlint assumed in `extra["nim_says"]`)."""
    rel = published(d)
    if generic.GENERIC in d.extra:  # the multi-LLM NIM: the profiles it generates for the checkpoint
        picked, why = generic.profiles(d, arch, gpu)
    elif rel is None:  # a TensorRT-LLM profile named, its tags read from its name (options.read)
        named = d.extra[NAMED]
        picked, why = (
            (_from_name(str(named.value)),),
            "named by NIM_MODEL_PROFILE (its tags read from the name)",
        )
    else:
        picked, why = _picked(d, rel, gpu, d.extra[RELEASE].where)
    runs = [(p, _backend_settings(d, arch, gpu, p)) for p in picked]
    says = f"NIM profile {_named(picked[0])}: {why}"
    if len(runs) > 1 and gpu is not None and gpu.engine_bytes:
        runs, says = _default(runs, arch, gpu, why)
    p, s = runs[0]
    says += passed_over(d) + _build_limits(s) if ENGINE_OF[p.backend] == "trtllm" else ""
    extra = {**s.extra, "nim_backend": ENGINE_OF[p.backend], "nim_says": says, RUNS: p.id}
    return replace(s, engine="nim", extra=extra)


def _picked(d: Deployment, rel: selection.Release, gpu: Any, where: Any) -> tuple[tuple[Any, ...], str]:
    fixed = d.extra.get(FIXED)
    if fixed is not None:
        p = next(p for p in rel.profiles if p.id == fixed.value)
        if gpu is not None and p.gpu and p.gpu != gpu.id:
            raise NotPlanned(
                f"NIM_MODEL_PROFILE {_named(p)} is built for {p.gpu_tag}, not {gpu.name} (NIM lists it as "
                "incompatible with the system)",
                fixed.where,
            )
        return (p,), "named by NIM_MODEL_PROFILE" + _bypassed(d)
    count = d.gpus_seen()
    if count is None:
        raise NotPlanned(
            f"NIM picks the profile of {rel.image}:{rel.release} by the GPUs it finds, and the pod's GPU count "
            "is not stated",
            where,
        )
    if gpu is None:
        raise NotPlanned()  # the GPU type is not stated: the usual cards are each tried (run/fleet.py)
    choice = selection.choose(rel, gpu.id, int(count.value), lora=LORA in d.extra, **wanted(d))
    if not choice.picked:
        if unpublished(d, gpu, int(count.value)):
            raise NotPlanned()  # KV201 says it at the NIM variable (parallel.refusal)
        raise NotPlanned(f"{choice.none}, so NIM starts none ({rel.source.split(' (')[0]})", where)
    kept = f"; {choice.kept}" if choice.kept else ""
    return choice.picked, f"{selection.SELECTION} on {count.value} x {gpu.name}{kept}{_tags_note(d, choice)}"


def _bypassed(d: Deployment) -> str:
    if TAGS not in d.extra:
        return ""
    return (
        "; NIM_TAGS_SELECTOR is not applied: it narrows NIM's automatic selection, which NIM_MODEL_PROFILE "
        "replaces (kvlint's reading)"
    )


def wanted(d: Deployment) -> dict[str, Any]:
    """What the NIM variables the file states ask of the profile, as selection.choose takes it."""
    tp, pp, said = d.extra.get(TP), d.extra.get(PP), d.extra.get(TAGS)
    return {
        "tp": int(tp.value) if tp is not None else None,
        "pp": int(pp.value) if pp is not None else None,
        "tags": (tags.parse(str(said.value)) or ()) if said is not None else (),
    }


def _tags_note(d: Deployment, choice: selection.Choice) -> str:
    """The arithmetic of what NIM_TAGS_SELECTOR left, where the file sets it."""
    return f"; {choice.left}" if TAGS in d.extra else ""


def unpublished(d: Deployment, gpu: Any, count: int) -> bool:
    """The NIM variables that narrow the selection (NIM_TENSOR_PARALLEL_SIZE, NIM_PIPELINE_PARALLEL_SIZE,
    NIM_TAGS_SELECTOR) leave no published profile runnable on `count` GPUs of `gpu`, where without them one is."""
    rel = published(d)
    if rel is None or not any(k in d.extra for k in (TP, PP, TAGS)) or FIXED in d.extra or gpu is None:
        return False
    lora = LORA in d.extra
    return not selection.choose(rel, gpu.id, count, lora=lora, **wanted(d)).picked and bool(
        selection.choose(rel, gpu.id, count, lora=lora).picked
    )


def _from_name(text: str) -> selection.Published:
    from kvlint.engines.nim import profiles

    p = profiles.parse(text)
    assert p is not None  # options.read keeps a name only where it parses
    return selection.Published("", p.backend, p.precision, p.tp, p.pp, p.tp * p.pp, gpu_tag=p.gpu)


def _named(p: selection.Published) -> str:
    ident = f"{p.id[:12]}…, " if p.id else ""
    return f"{p.name} ({ident}{BACKENDS[p.backend]} {p.precision}, TP {p.tp})"


def _backend_settings(d: Deployment, arch: Any, gpu: Any, p: selection.Published) -> Any:
    """The backend's settings for profile `p`: its tags where the file states none of its own (for a TensorRT-LLM
    profile, none but NIM_PASSTHROUGH_ARGS's, which it does not take)."""
    engine = ENGINE_OF[p.backend]
    note = f"NIM profile {p.name}"
    changes: dict[str, Any] = dict.fromkeys(_passed(d)) if engine == "trtllm" else {}
    precision = HALF.get(p.precision) or ("quantization", QUANT.get(p.precision, p.precision))
    for field, value in (
        ("tensor_parallel", p.tp),
        ("pipeline_parallel", p.pp),
        *(() if p.generated else (precision,)),  # a generated profile's precision is the checkpoint's own
    ):
        if field in changes or getattr(d, field) is None:
            changes[field] = inferred(value, note)
    if engine == "trtllm":  # a pre-built engine: TensorRT-LLM's engine path
        changes["extra"] = {**d.extra, "backend": inferred("trt", f"{note}: a pre-built TensorRT-LLM engine")}
    return engines.get(engine).settings(replace(d, **changes), arch, gpu, None)


def _passed(d: Deployment) -> list[str]:
    """The Deployment fields NIM_PASSTHROUGH_ARGS set (vLLM options), which a TensorRT-LLM profile does not read."""
    said = f"env {nim_env.PASSTHROUGH}"
    return [
        name
        for name in fields(d)
        if isinstance(v := getattr(d, name), Value) and v.origin == "stated" and v.note == said
    ]


def _build_limits(s: Any) -> str:
    """What the plan of a pre-built TensorRT-LLM profile assumes of the engine's build: NIM publishes a profile's
    tags (backend, precision, TP, PP, GPU), not the limits its engine was built with, so the trtllm-build defaults
    kvlint takes for them (engines/trtllm/engine_config.py) are named; they size the runtime and decoder buffers."""
    return (
        f"; NIM does not publish the limits the profile's engine was built with: kvlint takes trtllm-build's "
        f"defaults (max_batch_size {s.max_num_seqs:,}, max_num_tokens {s.max_batched_tokens:,}, max_seq_len "
        f"{s.max_model_len:,}), which size the engine's runtime and decoder buffers in this plan"
    )


def passed_over(d: Deployment) -> str:
    """What the plan of a TensorRT-LLM profile says of NIM_PASSTHROUGH_ARGS ('' when it sets nothing kvlint reads)."""
    names = _passed(d)
    if not names:
        return ""
    shown = ", ".join(f"{n} {getattr(d, n).value}" for n in names)
    return (
        f"; {nim_env.PASSTHROUGH} is a vLLM command line, which the TensorRT-LLM profile does not take: "
        f"what it sets ({shown}) is not in this plan"
    )


def _default(runs: list[tuple[Any, Any]], arch: Any, gpu: Any, why: str) -> tuple[list[tuple[Any, Any]], str]:
    """Every profile NIM may start, planned; kvlint's default first: the one that uses the most of the GPUs the
    pod requests (none idle), then the one whose KV cache holds the fewest tokens."""
    planned = [(p, s, engines.get(ENGINE_OF[p.backend]).plan(arch, gpu, s)) for p, s in runs]
    planned.sort(key=lambda t: (-t[0].gpus, t[2].kv_tokens, t[0].id))
    others = "; ".join(_figures(p, plan) for p, _, plan in planned[1:])
    says = (
        f"NIM may start any of {len(planned)} profiles ({why}); kvlint's default is {_named(planned[0][0])}, the "
        f"one that uses the most of the pod's GPUs; the others, each planned: {others}"
    )
    return [(p, s) for p, s, _ in planned], says


def _figures(p: selection.Published, plan: Any) -> str:
    short = plan.max_concurrency < 1
    fits = f", one sequence of {plan.max_model_len:,} tokens does not fit" if short else ""
    return f"{p.name}: a KV cache of {tokens(plan.kv_tokens)} tokens{fits}"


def plan(arch: Any, gpu: Any, s: Any) -> Any:
    p = engines.get(s.extra.get("nim_backend", "vllm")).plan(arch, gpu, s)
    says = s.extra.get("nim_says")
    if says:
        p.notes.append(says)
        p.lines = [says, *p.lines]
    return p


__all__ = [
    "FIXED",
    "LORA",
    "NAMED",
    "RELEASE",
    "PP",
    "TAGS",
    "TP",
    "applies",
    "plan",
    "published",
    "settings",
    "unpublished",
    "wanted",
]
