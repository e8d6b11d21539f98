"""Which profile an LLM-specific NIM runs: the profiles its image publishes at its release (data/profiles.json,
from the image's model manifest) and NIM's automatic selection among those the GPUs admit.

NIM's order, as its documentation states it (docs.nvidia.com/nim/large-language-models/1.1.0/profiles.html and
latest/optimization.html, "Automatic Profile Selection"; 1.12.0/profiles.html for generic profiles):
1. compatibility: the profiles runnable on the number and type of GPUs found (a hardware-specific profile on
   its own GPU, a generic one, with no gpu tag, on any; its GPU count at most the GPUs the container sees);
2. hardware-specific (optimized) profiles over generic ones, the optimized TensorRT-LLM profiles over vLLM;
3. lower precision over higher (fp8 over fp16).
What is left after these keys is every profile NIM may still pick: more than one, and kvlint checks each
(`Choice.picked`), as a fleet is checked.

Some readings are kvlint's own, and said so where they apply: a LoRA profile is left out unless the file
serves adapters (NIM_PEFT_SOURCE), NIM_TENSOR_PARALLEL_SIZE and NIM_PIPELINE_PARALLEL_SIZE keep the profiles
of that TP and PP, and NIM_TAGS_SELECTOR keeps those whose tags match every pair it names (tags.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from kvlint.record import record

# bits per weight a profile's precision word stands for (lower wins)
BITS = {"nvfp4": 4, "mxfp4": 4, "int4_awq": 4, "int8wo": 8, "int8_wo": 8, "fp8": 8, "bf16": 16, "fp16": 16}
SELECTION = (
    "NIM's automatic selection: the profiles runnable on the GPUs found, hardware-specific ones over generic, "
    "TensorRT-LLM over vLLM, lower precision first (docs.nvidia.com/nim/large-language-models/1.1.0/profiles.html)"
)


@record(frozen=True)
class Published:
    """One profile of an image's manifest, by its tags."""

    id: str
    backend: str  # tensorrt_llm | vllm | sglang (the llm_engine tag)
    precision: str
    tp: int
    pp: int
    gpus: int  # the number_of_gpus tag, else TP x PP
    gpu: str = ""  # the kvlint GPU it targets ('' for a generic profile)
    gpu_tag: str = ""  # the manifest's own gpu tag (h100, a10g, ...)
    kind: str = ""  # throughput | latency (| throughput-lora ...); '' for a generic profile
    lora: bool = False
    buildable: bool = False  # a generic TensorRT-LLM profile that builds its engine at start-up
    gpu_device: str = ""  # the manifest's gpu_device tag (a PCI id, e.g. 26b9:10de); '' where it has none
    generated: bool = (
        False  # generated at start-up for the checkpoint (generic.py): its precision is the checkpoint's
    )

    @property
    def name(self) -> str:
        """The profile's tags spelled as its descriptive name (kvlint's spelling: list-model-profiles' has
        varied across releases, e.g. with or without `-pp1`)."""
        parts = [self.backend, *([self.gpu_tag.lower()] if self.gpu_tag else [])]
        parts += [
            *(["trtllm_buildable"] if self.buildable else []),
            self.precision,
            f"tp{self.tp}",
            f"pp{self.pp}",
        ]
        parts += [self.kind] if self.kind else []
        parts += ["lora"] if self.lora and "lora" not in self.kind else []
        return "-".join(parts)


@record(frozen=True)
class Release:
    image: str
    release: str
    source: str
    profiles: tuple[Published, ...]


@record(frozen=True)
class Choice:
    """What NIM's order leaves: `picked` (one: the profile it starts; several: each one it may start),
    `runnable` every compatible profile, `kept` what kvlint's own readings did, `none` why nothing is, `left` how
    many profiles each reading kept."""

    picked: tuple[Published, ...]
    runnable: tuple[Published, ...] = ()
    kept: str = ""
    none: str = ""
    left: str = ""  # the arithmetic: how many profiles each reading left


def _published(row: dict) -> Published:
    return Published(
        id=row["id"],
        backend=row["backend"],
        precision=row["precision"],
        tp=int(row["tp"]),
        pp=int(row.get("pp", 1)),
        gpus=int(row.get("gpus") or int(row["tp"]) * int(row.get("pp", 1))),
        gpu=row.get("gpu", ""),
        gpu_tag=row.get("gpu_tag", ""),
        kind=row.get("kind", ""),
        lora=bool(row.get("lora", False)),
        buildable=bool(row.get("buildable", False)),
        gpu_device=row.get("gpu_device", ""),
    )


@cache
def _releases() -> dict[str, dict[str, Release]]:
    from kvlint.engines import facts

    out: dict[str, dict[str, Release]] = {}
    for r in facts.load("nim", "profiles")["releases"]:
        rel = Release(r["image"], r["release"], r["source"], tuple(_published(p) for p in r["profiles"]))
        out.setdefault(r["image"], {})[r["release"]] = rel
    return out


def releases_of(image: str) -> tuple[str, ...]:
    """The releases of image `org/name` whose profiles the table lists."""
    return tuple(_releases().get(image, {}))


def release_of(image: str, tag: str | None) -> Release | None:
    """The profiles of image `org/name` at release `tag` (the image tag as written); None when the table has
    no list for that release (a profile list is one release's: never carried to another)."""
    return _releases().get(image, {}).get((tag or "").strip())


def by_id_or_name(rel: Release, text: str) -> Published | None:
    """The profile NIM_MODEL_PROFILE names, by its id or its descriptive name (with or without `-pp1`)."""
    said = text.strip().lower()
    for p in rel.profiles:
        if said in (p.id, p.name.lower(), p.name.lower().replace(f"-pp{p.pp}", "", 1)):
            return p
    return None


def _runnable(rel: Release, gpu: str | None, count: int) -> list[Published]:
    return [p for p in rel.profiles if (not p.gpu or p.gpu == gpu) and p.gpus <= count]


def choose(
    rel: Release,
    gpu: str | None,
    count: int,
    tp: int | None = None,
    lora: bool = False,
    pp: int | None = None,
    tags: tuple[tuple[str, str], ...] = (),
) -> Choice:
    """The profiles NIM may start on `count` GPUs of catalog type `gpu` (None: one no profile targets by name),
    among those of TP `tp`, PP `pp` and the NIM_TAGS_SELECTOR pairs `tags` where stated."""
    runnable = _runnable(rel, gpu, count)
    if not runnable:
        return Choice((), none=_none(rel, gpu, count))
    kept, said, trail = list(runnable), [], [f"{len(runnable)} runnable on {count} of these GPUs"]
    for keep, note, counted in _filters(tp, lora, pp, tags):
        kept = [p for p in kept if keep(p)]
        said += [note] if note else []
        trail.append(f"{len(kept)} {counted}")
    left = f"of the {len(rel.profiles)} profiles {rel.release} publishes, {', '.join(trail)}"
    if not kept:
        return Choice((), tuple(runnable), "; ".join(said), _none_kept(runnable, tp, lora), left)
    pool = [p for p in kept if p.gpu] or kept  # hardware-specific over generic
    pool = [p for p in pool if p.backend == "tensorrt_llm" and p.gpu] or pool  # optimized TensorRT-LLM
    low = min(BITS.get(p.precision, 16) for p in pool)
    pool = [p for p in pool if BITS.get(p.precision, 16) == low]
    return Choice(tuple(pool), tuple(runnable), "; ".join(said), left=left)


def _filters(
    tp: int | None, lora: bool, pp: int | None, tags: tuple[tuple[str, str], ...]
) -> list[tuple[Callable[[Published], bool], str, str]]:
    """(keeps a profile, what the plan says of it, what the count of those kept is) for each reading in force,
    in the order applied."""
    from kvlint.engines.nim import tags as selector

    out: list[tuple[Callable[[Published], bool], str, str]] = [
        (
            lambda p: p.lora == lora,
            "" if lora else "LoRA profiles left out (the file serves no adapters: NIM_PEFT_SOURCE unset)",
            "with LoRA" if lora else "without LoRA",
        )
    ]
    if tp is not None:
        out.append(
            (lambda p: p.tp == tp, f"the profiles of TP {tp} (NIM_TENSOR_PARALLEL_SIZE)", f"of TP {tp}")
        )
    if pp is not None:
        out.append(
            (lambda p: p.pp == pp, f"the profiles of PP {pp} (NIM_PIPELINE_PARALLEL_SIZE)", f"of PP {pp}")
        )
    if tags:
        text = selector.spelled(tags)
        out.append(
            (
                lambda p: selector.matches(p, tags),
                f"the profiles whose tags match {selector.VARIABLE} {text} (every pair: kvlint's reading)",
                f"match {selector.VARIABLE} {text}",
            )
        )
    return out


def _none(rel: Release, gpu: str | None, count: int) -> str:
    targets = sorted({p.gpu_tag for p in rel.profiles if p.gpu})
    generic = [p for p in rel.profiles if not p.gpu]
    if not generic and not any(p.gpu == gpu for p in rel.profiles):
        return (
            f"none of the {len(rel.profiles)} profiles of {rel.image}:{rel.release} targets this GPU (they "
            f"target {', '.join(targets)}) and none is generic"
        )
    least = min(p.gpus for p in rel.profiles if not p.gpu or p.gpu == gpu)
    return f"every profile of {rel.image}:{rel.release} this GPU admits needs {least} GPUs or more, and the pod has {count}"


def _none_kept(runnable: list[Published], tp: int | None, lora: bool) -> str:
    tps = sorted({p.tp for p in runnable if p.lora == lora})
    if tp is not None and tps:
        return (
            f"no profile runnable here has TP {tp} (NIM_TENSOR_PARALLEL_SIZE); those runnable have TP {tps}"
        )
    return "every profile runnable here is a LoRA profile, and the file serves no adapters"


__all__ = ["BITS", "Choice", "Published", "Release", "by_id_or_name", "choose", "release_of", "releases_of"]
