"""The flags each release of an engine's command line has, and what a flag written for a release is to it.

An engine's `data/flag_sets.json` lists every release read (its wheel from PyPI, python files read with
`ast` by benchmarks/engine_flags.py) and, for each flag, the runs of consecutive releases that have it.
A flag the release in force does not have makes the engine's argparse exit at start-up ("error:
unrecognized arguments"): an error where the release is pinned (the engine's own image's tag, or the
release the configuration states) and kvlint read that release; a warning naming the assumption where it
is not (no tag, `latest`, a pre-release, a release not read, an image built by someone else, whose build
may add options).

vLLM (0.6.0 to 0.33.0), SGLang (0.4.0 to 0.5.13.post1), TGI's launcher (0.2.0 to 3.3.7, clap) and
trtllm-serve (0.18.2 to 1.2.1, click) have tables; clap and click take no abbreviation, make no
inverse, and `--x_y` is not `--x-y`. argparse takes an unambiguous prefix
of a long option (`allow_abbrev`: on in every release read; vLLM's FlexibleArgumentParser and SGLang's plain
ArgumentParser never turn it off); vLLM's parser rewrites `_` to `-` in option names (SGLang's does not) and
adds `--no-x` (BooleanOptionalAction) and, in 0.33, `--disable-x` for `--enable-x` (EnableDisableAction,
vllm==0.33.0:vllm/utils/argparse_utils.py:119). A flag that may be one of those is never an error.
LMDeploy's `serve api_server` (0.4.0 to 0.18.0): argparse, allow_abbrev on, no generated inverses, `_` read
as `-` only from 0.9.2 (its FlexibleArgumentParser; the table's `underscores_from`). llama-server's builds
(b3716 to b11434, some read: kvlint/engines/flag_builds.py judges one between two read) look every spelling
up whole, short ones too (`exact`), `_` read as `-`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Set as AbstractSet
from functools import cache

from kvlint.bounds import FINDINGS_PER_RULE_MAX, show
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, Value, stated
from kvlint.engines import display, facts, flag_builds
from kvlint.engines.flag_releases import ReleaseSets
from kvlint.extract.pod.argv import Token, flag_name, split_flag
from kvlint.extract.pod.engine_args.options import Parsed
from kvlint.findings import Issue, Location, Severity
from kvlint.lazy_re import lazy
from kvlint.record import record

KEY = "flags_written"  # Deployment.extra: the flags a command line writes, judged at resolve
OFFICIAL_IMAGES = {
    "vllm": ("vllm/vllm-openai",),
    "sglang": ("lmsysorg/sglang",),
    "tgi": ("ghcr.io/huggingface/text-generation-inference",),
    "trtllm": ("nvcr.io/nvidia/tensorrt-llm/release",),
    "lmdeploy": ("openmmlab/lmdeploy",),
    "llamacpp": ("ghcr.io/ggml-org/llama.cpp", "ghcr.io/ggerganov/llama.cpp"),
}  # the engine's own images, built from its release
_TAG = lazy(r"^v?(\d+(?:\.\d+)*(?:\.post\d+)?)(?![\w.])")


@record(frozen=True)
class Written:
    """One flag of a command line: its name as written (without `=value`), whether the engine's option
    table (every release kvlint knows) has it, and where it is."""

    name: str
    known: bool
    where: Location | None
    canonical: str = ""  # the option table's name for it (a prefix or `_` spelling resolved)
    value: Token | None = None  # the value it is given (judged against the release's choices)
    env: str = ""  # read from this environment variable, not written on the command line
    ambiguous: tuple[str, ...] = ()  # the options a prefix matches in the releases kvlint read


@record(frozen=True)
class FlagTable:
    releases: tuple[str, ...]  # oldest first
    read: dict[str, str]  # release -> the files read
    spans: dict[str, tuple[str, ...]]  # flag -> runs "0.6.0..0.9.2"
    sets: ReleaseSets  # release -> its flags (each made when first asked)
    underscores: (
        bool  # the parser reads `--max_model_len` as `--max-model-len` (vLLM's FlexibleArgumentParser)
    )
    help: str  # the command that lists a release's flags
    abbreviations: bool = True  # argparse's allow_abbrev: an unambiguous prefix is the option (clap: no)
    inverses: bool = True  # the parser makes --no-x / --disable-x of boolean options (clap: no)
    parser: str = "argparse"  # its words for an option it does not have ("argparse", "clap" or "click")
    underscores_from: str = ""  # the first release whose parser rewrites `_` (none: every release's does)
    # numbered builds: an unread one this close to two read is judged by both (flag_builds.py)
    between: int = 0
    exact: bool = False  # every spelling is looked up as written, single-dash ones too (llama.cpp)

    def first_last(self) -> str:
        return f"{self.releases[0]} to {self.releases[-1]}"


@cache
def table(engine: str) -> FlagTable | None:
    """The engine's flag table, or None where kvlint has read no release's flags."""
    if not facts.has_table(engine, "flag_sets"):
        return None
    doc = facts.load(engine, "flag_sets")
    order = tuple(doc["releases"])
    spans = {k: tuple(v) for k, v in doc["flags"].items()}
    return FlagTable(
        order,
        dict(doc["read"]),
        spans,
        ReleaseSets(order, spans),
        bool(doc.get("underscores")),
        doc["help"],
        bool(doc.get("abbreviations", True)),
        bool(doc.get("inverses", True)),
        str(doc.get("parser", "argparse")),
        str(doc.get("underscores_from", "")),
        int(doc.get("between", 0)),
        bool(doc.get("exact", False)),
    )


def written(parsed: Parsed, env: dict[str, str] | None = None) -> list[Written]:
    """The flags a command line writes: those the engine's option table knows and those it does not;
    `env`: options read from an environment variable (option -> variable), not written as flags."""
    env = env or {}
    out = [
        Written(split_flag(flag)[0], True, flag.where, name, value, env.get(name, ""))
        for name, (flag, value, _) in parsed.values.items()
        if "." not in name
    ]
    out += [Written(flag_name(tok), False, tok.where) for tok in parsed.unknown]  # no `=value` token built
    return out


def ambiguous(parsed: Parsed) -> list[Written]:
    """Takes the prefixes the option table found ambiguous out of `parsed.problems`: each is judged
    against the release in force (a prefix may match one option of that release, or several)."""
    taken = {id(tok) for tok, _ in parsed.ambiguous}
    parsed.problems[:] = [(tok, m) for tok, m in parsed.problems if id(tok) not in taken]
    return [
        Written(flag_name(tok), True, tok.where, ambiguous=tuple(found)) for tok, found in parsed.ambiguous
    ]


def record_flags(d: Deployment, engine: str, written: list[Written]) -> None:
    """Keeps the flags one command line writes on the deployment (judged when the release is known)."""
    before = d.extra.get(KEY)
    flags = (*(before.value[1] if before is not None else ()), *written)
    d.extra[KEY] = stated((engine, flags), d.where)


class _Names:
    """One set of flags (a release's, or every release's) and the lookups `_accepted` makes in it, each
    O(log n) a name: a command line of 70,000 made-up flags scanned the set twice a flag."""

    def __init__(self, flags: AbstractSet[str], abbreviations: bool = True, inverses: bool = True) -> None:
        self.flags = frozenset(flags)
        self.abbreviations = abbreviations  # the parser takes an unambiguous prefix (argparse allow_abbrev)
        self.inverses = inverses  # the parser makes --no-x / --disable-x of boolean options
        self._sorted = sorted(flags)
        self._backwards = sorted(f[2:][::-1] for f in flags)  # each flag after its dashes, reversed
        self.long = sorted(f for f in flags if f.startswith("--"))  # what a did-you-mean is chosen from

    def has_prefix(self, text: str) -> bool:
        """Some flag starts with `text` (names sharing a prefix are adjacent in sorted order)."""
        at = bisect_left(self._sorted, text)
        return at < len(self._sorted) and self._sorted[at].startswith(text)

    def matches(self, prefix: str) -> list[str]:
        """The long options that start with `prefix` (one when it is an option's exact name)."""
        if prefix in self.flags:
            return [prefix]
        at = bisect_left(self._sorted, prefix)
        out = []
        while at < len(self._sorted) and self._sorted[at].startswith(prefix):
            out.append(self._sorted[at])
            at += 1
        return out

    def has_suffix(self, text: str) -> bool:
        """Some flag's name after its two dashes ends with `text`."""
        back = text[::-1]
        at = bisect_left(self._backwards, back)
        return at < len(self._backwards) and self._backwards[at].startswith(back)


@cache
def _names(engine: str, releases: tuple[str, ...]) -> _Names:
    """The flags of `releases` together, made once a run for each set of releases asked."""
    t = table(engine)
    assert t is not None
    return _Names(t.sets.union(releases), t.abbreviations, t.inverses)


def _accepted(name: str, names: _Names, exact: bool = False) -> bool:
    """Whether a release with these flags may take `name`: the flag, its generated inverse (`--no-x`;
    `--disable-x` / `--enable-x` from vLLM 0.33's EnableDisableAction), or a prefix of one (allow_abbrev),
    each where the engine's parser does that. `exact`: the parser looks every spelling up as written."""
    if name in names.flags or (not exact and not name.startswith("--")):
        return True  # single-dash spellings (-tp, -O3) are left to the option table
    if not name.startswith("--"):
        return False
    stem = name[2:]
    if names.inverses:
        for prefix in ("no-", "enable-", "disable-"):
            if stem.startswith(prefix) and names.has_suffix(stem[len(prefix) :]):
                return True
    return names.abbreviations and names.has_prefix(name)


def _candidates(t: FlagTable, text: str) -> list[str]:
    """The releases read that a version text may name: '0.9.0' -> 0.9.0 and 0.9.0.1; '0.10' -> 0.10.x."""
    return [r for r in t.releases if r == text or r.startswith(text + ".")]


@record(frozen=True)
class Pin:
    """The release in force as far as the flags go: the releases it may be, and why it is (not) certain."""

    releases: tuple[str, ...]
    certain: bool
    why: str  # what pins it, or the assumption made


def pin(d: Deployment, t: FlagTable, engine: str, version: Value | None) -> Pin:
    image = str(d.image.value) if d.image is not None else ""
    repo, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
    if version is None:
        return Pin((), False, "no release is pinned (image tag latest or none, no --engine-version)")
    text = str(version.value).strip().lstrip("v")
    from_tag = version.origin == "inferred" and "image tag" in version.note
    whole = _TAG().match(tag) if from_tag else None
    note = ""
    if t.between:  # a numbered build, which the engine's image_version read from the tag whole
        releases, note = flag_builds.judged_by(t.releases, t.between, text)
    else:
        if whole is not None and whole.group(1) in t.releases:
            # the tag's own release (v0.9.0.1, v0.8.5.post1), not its first three numbers
            text = whole.group(1)
        releases = (text,) if text in t.releases else tuple(_candidates(t, text))
    if not releases:
        return Pin((), False, f"kvlint has not read the flags of {display(engine)} {text}")
    if from_tag and whole is None and not t.between:
        return Pin(
            releases,
            False,
            f"the image tag {show(tag, 40)} names no release exactly (a pre-release or a build)",
        )
    own = any(repo == o or repo.endswith("/" + o) for o in OFFICIAL_IMAGES.get(engine, ()))
    if image and not own:
        return Pin(
            releases, False, f"the image {show(image, 60)} is not the engine's own: its build may add options"
        )
    return Pin(
        releases,
        True,
        (f"the image tag {tag} pins it" if from_tag else f"{version.note or 'stated'}: {text}") + note,
    )


def _spans(t: FlagTable, name: str) -> str:
    runs = t.spans.get(name)
    return ", ".join(r.replace("..", " to ") for r in runs) if runs else ""


def _did_you_mean(name: str, names: _Names) -> str | None:
    import difflib  # only for a flag the release does not have

    close = difflib.get_close_matches(name, names.long, n=1, cutoff=0.7)
    return close[0] if close else None


def issues(d: Deployment, version: Value | None) -> list[Issue]:
    """KV005s for the flags the release in force does not have: errors where the release is pinned and
    read, warnings that name the assumption otherwise."""
    hit = d.extra.get(KEY)
    if hit is None:
        return []
    engine, written = hit.value
    t = table(engine)
    if t is None:
        return []
    p = pin(d, t, engine, version)
    label = display(engine)
    out: list[Issue] = []
    seen: set[str] = set()
    rejected, last = 0, d.where
    rewrites = _rewrites(t, p)
    for w in written:
        name = _normal(w.name, rewrites)
        if w.ambiguous or w.value is not None:
            found = _value_or_prefix(d, t, p, w, name, engine)
            if found is not None:
                out.append(found)
            if w.env or (w.ambiguous and (found is not None or not p.certain)):
                continue  # clap ignores the variable of an option its release lacks
        if name in seen:
            continue
        seen.add(name)
        if not _rejected(t, p, w, name, engine):
            continue
        rejected += 1
        last = w.where or d.where
        if rejected <= FINDINGS_PER_RULE_MAX:  # only those listed are described (a did-you-mean each)
            out.append(_issue(d, t, p, w, name, label, engine))
    if rejected > FINDINGS_PER_RULE_MAX:
        more = rejected - FINDINGS_PER_RULE_MAX
        out.append(
            Issue(UNPARSED_SETTING, f"{more:,} more options the engine does not have, not listed", last)
        )
    return out


def _value_or_prefix(d: Deployment, t: FlagTable, p: Pin, w: Written, name: str, engine: str) -> Issue | None:
    """A prefix several options of the release in force start with, or a value outside the option's
    choices there (kvlint/engines/flag_choices.py)."""
    from kvlint.engines import flag_choices

    if w.ambiguous:
        matches = _names(engine, p.releases).matches(name) if p.certain else []
        if p.certain and not matches:
            return None  # no option of the release starts with it: the flag check says so
        if p.certain and len(matches) == 1:
            return None  # argparse takes the one option of the release in force
        return flag_choices.ambiguous_issue(d, engine, name, matches, w.where, p, w.ambiguous)
    value = w.value
    if value is None or value.unresolved or not w.canonical:
        return None
    return flag_choices.value_issue(
        d, engine, w.canonical, value.text, value.where or w.where, p, t.parser, w.env
    )


def _normal(name: str, underscores: bool) -> str:
    """The name the engine's parser looks up: up to a JSON key (`--x.key`), underscores as dashes where the
    parser rewrites them."""
    if not name.startswith("--"):
        return name
    head = name.split(".", 1)[0] if underscores else name
    return head.replace("_", "-") if underscores else head


def _rewrites(t: FlagTable, p: Pin) -> bool:
    """The parser in force reads `--x_y` as `--x-y`: where only later releases do (`underscores_from`),
    where one of the releases pinned is one of them, or none is pinned."""
    if not t.underscores or not t.underscores_from or not p.certain:
        return t.underscores
    first = t.releases.index(t.underscores_from)
    return any(t.releases.index(r) >= first for r in p.releases)


def _rejected(t: FlagTable, p: Pin, w: Written, name: str, engine: str) -> bool:
    """The release in force does not take the flag: the pinned release's argparse rejects it, or, with
    none pinned, no release read has it."""
    if p.certain:
        return not _accepted(name, _names(engine, p.releases), t.exact)
    return not w.known and not _accepted(name, _names(engine, t.releases), t.exact)


# a parser's words for an option it lacks, short form, name (clap 4 error.rs InvalidArg; click 8.1 NoSuchOption)
_WORDS = {
    "argparse": ("error: unrecognized arguments: {}", "'unrecognized arguments'", "argparse"),
    "clap": ("error: unexpected argument '{}' found", "'unexpected argument {}'", "clap parser"),
    "click": ("Error: No such option: {}", "'No such option: {}'", "click parser"),
    # llama.cpp common/arg.cpp common_params_parse_ex (b3716 to b11434)
    "llama.cpp": ("error: invalid argument: {}", "'invalid argument: {}'", "argument parser"),
}


def _exits(t: FlagTable, said: str) -> str:
    return f"its {_WORDS[t.parser][2]} exits at start-up with '{_WORDS[t.parser][0].format(said)}'"


def _issue(d: Deployment, t: FlagTable, p: Pin, w: Written, name: str, label: str, engine: str) -> Issue:
    """The KV005 of a flag `_rejected` found."""
    where = w.where or d.where
    said = show(name, 80)
    if p.certain:
        release = p.releases[0] if len(p.releases) == 1 else f"{p.releases[0]} to {p.releases[-1]}"
        other, names = _spans(t, name), _names(engine, p.releases)
        same = _normal(w.canonical, t.underscores)  # the pinned release's name for the option (an alias)
        guess = same if same in names.flags else None if other else _did_you_mean(name, names)
        return Issue(
            UNPARSED_SETTING,
            f"{label} {release} has no option {said}"
            + (f" ({label} {other} have it)" if other else "")
            + f": {_exits(t, said)} ({p.why})",
            where,
            details=(f"the flags of {label} {p.releases[0]}, read in {t.read[p.releases[0]]}",),
            fix=f"did you mean {guess}?" if guess else f"remove it, or check the spelling against `{t.help}`",
            severity=Severity.ERROR,
        )
    guess = _did_you_mean(name, _names(engine, t.releases))
    return Issue(
        UNPARSED_SETTING,
        f"{label} has no option {said} in the releases kvlint read ({t.first_last()}); {p.why}: {label} exits with"
        f" {_WORDS[t.parser][1].format(said)} unless the release in force or a plugin adds it",
        where,
        fix=f"did you mean {guess}?" if guess else f"remove it, or check the spelling against `{t.help}`",
    )
