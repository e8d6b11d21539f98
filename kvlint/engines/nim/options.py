"""A NIM container as kvlint reads it: the model its image serves, the profile it runs, and the options the
NIM_* variables set.

Where kvlint's table lists the profiles the image publishes at its release (data/profiles.json), the profile
is settled at planning, when the GPU is known (planned.py: the one NIM_MODEL_PROFILE names by id or name, else
NIM's selection for the GPUs). Without a list, a vLLM profile NIM_MODEL_PROFILE names is read as the vLLM
options NIM sets (its TP, PP and precision, under the NIM_* variables the file states), and a TensorRT-LLM one
is planned from the tags its name spells. What kvlint cannot know offline is said, once, as a KV004: an image
its table does not list, a profile id it has no list for, a precision it does not price, or no
NIM_MODEL_PROFILE and no published list (NIM then picks from the GPUs it finds at start-up).
"""

from __future__ import annotations

from kvlint import engines
from kvlint.codes import NOT_CHECKABLE, UNPARSED_SETTING
from kvlint.deployment import Deployment, stated
from kvlint.engines.nim import env as nim_env
from kvlint.engines.nim import generic, launch, planned, profiles, selection, tags
from kvlint.extract.pod.argv import EnvVar, Token
from kvlint.extract.pod.engine_args.apply import env_value
from kvlint.findings import Issue, IssueKind, Location, Severity

SELECTION = (
    "NIM picks its profile at start-up from the GPUs it finds (an optimized TensorRT-LLM profile first "
    "where the image has one for that GPU, then vLLM; docs.nvidia.com/nim/large-language-models/1.1.0/"
    "profiles.html), and the file sets no NIM_MODEL_PROFILE"
)
# profile precision -> the vLLM option NIM's vLLM backend runs it with
PRECISION = {
    "fp16": ("--dtype", "float16"),
    "bf16": ("--dtype", "bfloat16"),
    "fp8": ("--quantization", "fp8"),
}


# the precisions of a TensorRT-LLM profile kvlint prices (planned.py: 16-bit as the dtype, the rest as
# TensorRT-LLM's weight quantization, kvlint/engines/trtllm/quant.py)
TRTLLM_PRECISIONS = ("fp16", "bf16", "fp8", "nvfp4", "int4_awq", "int8_wo")


def read(d: Deployment, env: dict[str, EnvVar]) -> None:
    image = str(d.image.value) if d.image is not None else ""
    where = (d.image.where if d.image is not None else None) or _where(d)
    name = launch.image_name(image) if image else None
    model = nim_env.model_variable(env) or _model_of_image(name, where)
    if model is None:
        _not_checked(d, where, _no_model(image, name))
        return
    d.model = stated(model.text, model.where or where, model.note)
    tok = nim_env.profile_variable(env)
    if (
        name is not None
        and nim_env.model_variable(env) is None
        and _published(d, name, image, env, tok, where, model)
    ):
        return
    if tok is None:
        _without_profile(d, env, name, image, model, where)
        return
    profile = profiles.parse(tok.text)
    if profile is None:
        _not_checked(d, tok.where or where, _unread_profile(tok.text))
        return
    d.extra["nim_profile"] = stated(profile.name, tok.where, "NIM_MODEL_PROFILE")
    if profile.backend == "tensorrt_llm" and profile.precision in TRTLLM_PRECISIONS:
        d.extra[planned.NAMED] = stated(profile.name, tok.where, "NIM_MODEL_PROFILE")
        engines.get("vllm").read_options(d, nim_env.vllm_tokens(env, model), {}, positional_model=False)
        return
    if profile.backend != "vllm" or profile.precision not in PRECISION:
        _not_checked(d, tok.where or where, _not_planned(profile))
        return
    tokens = nim_env.vllm_tokens(env, model) + _profile_tokens(profile, tok, env)
    engines.get("vllm").read_options(d, tokens, {}, positional_model=False)


def _without_profile(
    d: Deployment, env: dict[str, EnvVar], name: str | None, image: str, model: Token, where: Location
) -> None:
    """No NIM_MODEL_PROFILE and no published list that settles it: the multi-LLM NIM's generic profile for the
    checkpoint NIM_MODEL_NAME names (settled at planning), else why the profile is not known offline (a
    model-specific image told to serve another checkpoint; a release whose list kvlint does not hold)."""
    own = nim_env.model_variable(env)
    if generic.serves_any_model(name) and own is not None:
        if not _selector(
            d,
            env,
            where,
            generic.TAGS,
            "the generic profiles the multi-LLM NIM generates (their names spell these)",
        ):
            return
        d.extra[generic.GENERIC] = stated(f"{name}:{launch.image_tag(image) or ''}".rstrip(":"), where)
        engines.get("vllm").read_options(d, nim_env.vllm_tokens(env, model), {}, positional_model=False)
    elif own is not None and name is not None and launch.model_of(name):
        _not_checked(d, own.where or where, _own_checkpoint(name, image, own, env))
    else:
        _not_checked(d, where, _selection(name, image) + _narrowed_unknown(env))


def _published(
    d: Deployment,
    name: str,
    image: str,
    env: dict[str, EnvVar],
    tok: Token | None,
    where: Location,
    model: Token,
) -> bool:
    """The image's release has a published profile list (data/profiles.json): the NIM_* variables read as
    the options they set, the profile left to planned.py (which NIM_MODEL_PROFILE names, or which NIM's
    selection leaves for the GPUs). False where the table has no list, or NIM_MODEL_PROFILE names a profile
    the list does not hold (read as a name, below)."""
    tag = launch.image_tag(image) or ""
    rel = selection.release_of(name, tag)
    if rel is None:
        return False
    fixed = selection.by_id_or_name(rel, tok.text) if tok is not None else None
    if tok is not None and fixed is None:
        return False
    d.extra[planned.RELEASE] = stated(f"{name}:{tag}", where, rel.source)
    if fixed is not None and tok is not None:
        d.extra[planned.FIXED] = stated(fixed.id, tok.where or where, "NIM_MODEL_PROFILE")
        d.extra["nim_profile"] = stated(fixed.name, tok.where, "NIM_MODEL_PROFILE")
    for key, name in ((planned.TP, "NIM_TENSOR_PARALLEL_SIZE"), (planned.PP, "NIM_PIPELINE_PARALLEL_SIZE")):
        size = env_value(env, name)
        if size is not None and size.text.strip().isdigit():
            d.extra[key] = stated(int(size.text.strip()), size.where)
    if not _selector(d, env, where):
        return True
    if env_value(env, "NIM_PEFT_SOURCE") is not None:
        d.extra[planned.LORA] = stated(True, where)
    engines.get("vllm").read_options(d, nim_env.vllm_tokens(env, model), {}, positional_model=False)
    return True


def _selector(
    d: Deployment,
    env: dict[str, EnvVar],
    where: Location,
    known: tuple[str, ...] = tuple(tags.TAGS),
    whose: str = "the profiles of kvlint's table (data/profiles.json)",
) -> bool:
    """NIM_TAGS_SELECTOR frozen as stated (planned.TAGS); False, with the located finding, where it is not a
    list of tag=value pairs (KV005) or names a tag kvlint's table does not carry (KV004)."""
    tok = env_value(env, tags.VARIABLE)
    if tok is None or not tok.text.strip():
        return True
    pairs = tags.parse(tok.text)
    at = tok.where or where
    if pairs is None:
        message = (
            f"{d.label()}: {tags.VARIABLE} {tok.text.strip()!r} is not a comma-separated list of tag=value pairs "
            "(e.g. precision=fp8,tp=2), so which profiles it leaves NIM is not known: not checked"
        )
        fix = f"write {tags.VARIABLE} as tag=value pairs joined by commas, or leave it out and let NIM pick"
        d.issues.append(Issue(UNPARSED_SETTING, message, at, fix=fix, severity=Severity.WARNING))
        d.extra["unsupported"] = stated("nim", at)
        return False
    missing = [k for k, _ in pairs if k not in known]
    if missing:
        _not_checked(
            d,
            at,
            f"{tags.VARIABLE} names the tag {', '.join(missing)}, which kvlint does not know for {whose} (it "
            f"knows {', '.join(known)}), so which profiles it keeps is not known offline",
        )
        return False
    d.extra[planned.TAGS] = stated(tok.text.strip(), at, tags.VARIABLE)
    return True


def _narrowed_unknown(env: dict[str, EnvVar]) -> str:
    """What the plan-less KV004 says of a NIM_TAGS_SELECTOR the file sets ('' where it sets none)."""
    tok = env_value(env, tags.VARIABLE)
    if tok is None or not tok.text.strip():
        return ""
    return f" ({tags.VARIABLE} {tok.text.strip()} narrows that choice, but without the list not to a known profile)"


def _selection(name: str | None, image: str) -> str:
    """Why the profile is not known offline: no profile list for this release in kvlint's table."""
    if name is None or not launch.model_of(name):
        return SELECTION
    listed = selection.releases_of(name)
    tag = launch.image_tag(image) or "(no tag)"
    has = f"it lists {', '.join(listed)}" if listed else "it lists no release of this image"
    return (
        f"NIM picks its profile at start-up from the GPUs it finds, the file sets no NIM_MODEL_PROFILE, and "
        f"kvlint's table of published NIM profiles (kvlint/engines/nim/data/profiles.json) has no list for "
        f"{name}:{tag} ({has}; a release's list is never carried to another){_looked_for(name, tag)}"
    )


def _own_checkpoint(name: str, image: str, own: Token, env: dict[str, EnvVar]) -> str:
    """Why a model-specific NIM told to serve a checkpoint of its own is not planned: the image's published
    profiles are those of the model it ships, and which one NIM starts for another checkpoint (or what it
    builds or generates for it) is not known offline."""
    variable = next(v for v in nim_env.MODEL_VARIABLES if v in env)
    shipped = launch.model_of(name)
    assert shipped is not None  # the caller asks only for an image the table lists
    tag = launch.image_tag(image) or "(no tag)"
    return (
        f"{variable} {own.text} asks the model-specific NIM {name}:{tag}, which ships {shipped[0]}, to serve "
        "that checkpoint instead; the profiles the image publishes are those of the model it ships, and which "
        "profile NIM starts for another checkpoint, or what it builds for it, is not known offline "
        "(NIM_MODEL_PROFILE names one, and kvlint then plans it)"
    )


def _looked_for(name: str, tag: str) -> str:
    """What was found of this release's profile list where it was looked for and not found (the table's
    `unpublished` rows); '' for a release no one looked for."""
    from kvlint.engines import facts

    for row in facts.load("nim", "profiles").get("unpublished", ()):
        if (row["image"], row["release"]) == (name, tag):
            return (
                "; its model manifest or a list-model-profiles print was looked for in public repositories, "
                f"issues and pages, and found: {row['found']}"
            )
    return ""


def _where(d: Deployment) -> Location:
    return (d.engine.where if d.engine is not None else None) or d.where


def _model_of_image(name: str | None, where: Location) -> Token | None:
    row = launch.model_of(name) if name else None
    if row is None:
        return None
    return Token(row[0], where, f"the model the NIM image {name} serves ({row[1]})")


def _profile_tokens(profile: profiles.Profile, tok: Token, env: dict[str, EnvVar]) -> list[Token]:
    """The profile's own tags, where no NIM_* variable (which NIM puts above them) sets the same."""
    note = f"NIM_MODEL_PROFILE {profile.name}"
    out: list[Token] = []
    if "NIM_TENSOR_PARALLEL_SIZE" not in env:
        out += [Token("--tensor-parallel-size", tok.where), Token(str(profile.tp), tok.where, note)]
    if "NIM_PIPELINE_PARALLEL_SIZE" not in env:
        out += [Token("--pipeline-parallel-size", tok.where), Token(str(profile.pp), tok.where, note)]
    option, value = PRECISION[profile.precision]
    return [*out, Token(option, tok.where), Token(value, tok.where, note)]


def _no_model(image: str, name: str | None) -> str:
    if not image:
        return "the NIM image (which fixes the model it serves) is not in this file"
    if name is None:
        return f"the image {image} names no NIM model (nvcr.io/nim/<org>/<model>)"
    return (
        f"kvlint's table of NIM images (kvlint/engines/nim/data/images.json) does not list {name}, so the "
        "model it serves is unknown"
    )


def _unread_profile(text: str) -> str:
    if profiles.PROFILE_ID.match(text.strip().lower()):
        return (
            f"NIM_MODEL_PROFILE {text.strip()[:12]}… is a profile id, which does not say its backend, "
            "precision or parallelism (its descriptive name, e.g. vllm-bf16-tp1, does)"
        )
    return f"NIM_MODEL_PROFILE {text.strip()!r} is not a profile name kvlint can read"


def _not_planned(profile: profiles.Profile) -> str:
    backend = profiles.BACKENDS[profile.backend]
    if profile.backend == "sglang":
        return f"the NIM profile {profile.name} runs {backend}, which kvlint does not plan for NIM yet"
    return f"the NIM profile {profile.name} runs {backend} at precision {profile.precision}, which kvlint does not map"


def _not_checked(d: Deployment, where: Location, why: str) -> None:
    d.issues.append(
        Issue(NOT_CHECKABLE, f"{d.label()}: {why}: not checked", where, kind=IssueKind.ENGINE_NOT_MODELLED)
    )
    d.extra["unsupported"] = stated("nim", where)


__all__ = ["read"]
