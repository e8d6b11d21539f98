"""Values and prefixes a release's parser refuses at start-up: a value outside an option's choices, and a
prefix that matches several options.

An engine's `data/flag_sets.json` `choices` maps an option to runs of releases and what each run takes:
`{"releases": "0.6.0..0.6.6", "type": "str", "values": [...]}` (argparse `choices`, read by
benchmarks/engine_choices.py; clap `value_enum` names, benchmarks/clap_enums.py, with the environment
variable clap also reads), or `{"unjudged": expression}` where the source computes them at run time (a
registry, a plugin list): kvlint says nothing of those values.

- argparse converts the value with the option's `type`, then checks it against `choices` and exits with
  "argument --x: invalid choice: 'v' (choose from 'a', 'b')" (CPython Lib/argparse.py `_check_value`);
- clap stops with "error: invalid value 'v' for '--quantize <QUANTIZE>'", for the flag and for its
  environment variable alike (clap 4 `ValueEnum`: names compared as written); click (trtllm-serve) with
  "Error: Invalid value for '--log_level': 'v' is not one of ..." (click.Choice, case-sensitive);
- argparse takes an option's exact name, or `--name=value`'s, before any prefix (`_parse_optional` returns
  on `arg_string in self._option_string_actions` before `_get_option_tuples`); a prefix that several option
  strings start with exits with "ambiguous option: --max could match --max-model-len, --max-num-seqs"
  (allow_abbrev, on in every vLLM and SGLang release read). Run on CPython 3.8.18, 3.10.13, 3.12.1 and
  3.13.0: the same answers (`--model` is --model, `--max-num` exits, `--max-num-s` is --max-num-seqs); the
  error is raised in `_parse_optional` there and in `consume_optional` on CPython main, same words.

Errors where the release is pinned and read (kvlint/engines/flag_sets.py `pin`). Where it is not: a
warning naming the assumption for a value no release read takes, where the releases read reach the newest
kvlint knows of (vLLM, TGI; not SGLang, read to 0.5.13.post1), and for a prefix that options of the releases
read share.
"""

from __future__ import annotations

from functools import cache

from kvlint.bounds import show
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment
from kvlint.engines import display, facts
from kvlint.findings import Issue, Severity

Entry = dict  # one run's {"type", "values"} or {"unjudged"}


@cache
def _runs(engine: str) -> dict[str, list[tuple[tuple[str, ...], Entry]]]:
    """option -> [(releases of the run, entry)] from the engine's flag table."""
    if not facts.has_table(engine, "flag_sets"):
        return {}
    doc = facts.load(engine, "flag_sets")
    order = list(doc["releases"])
    out: dict[str, list[tuple[tuple[str, ...], Entry]]] = {}
    for option, runs in doc.get("choices", {}).items():
        for run in runs:
            a, _, b = run["releases"].partition("..")
            lo, hi = order.index(a), order.index(b or a)
            out.setdefault(option, []).append((tuple(order[lo : hi + 1]), run))
    return out


@cache
def env_names(engine: str) -> dict[str, str]:
    """option -> the environment variable clap also reads it from (TGI's `#[clap(long, env)]`)."""
    return {o: run["env"] for o, runs in _runs(engine).items() for _r, run in runs if run.get("env")}


def entry(engine: str, option: str, release: str) -> Entry | None:
    """What `release` takes for `option`: its run's entry, or None where it takes any value."""
    for releases, run in _runs(engine).get(option, ()):
        if release in releases:
            return run
    return None


def accepts(run: Entry, text: str) -> bool | None:
    """Whether the parser takes `text` for an option with this entry; None where kvlint cannot say (a
    computed list, a type kvlint does not repeat, a value the type does not convert)."""
    if "unjudged" in run:
        return None
    kind = run["type"]
    if kind in _NULLABLE:
        kind = _NULLABLE[kind]
    if kind.startswith("optional:"):
        if text in ("", "None"):
            return None  # the type maps it to None (vllm optional_type / nullable_str)
        kind = kind.split(":", 1)[1]
    values = run["values"]
    if kind in ("str", "clap"):
        return text in values
    try:
        if kind == "int":
            return int(text) in {int(v) for v in values if _is_int(v)}
        if kind == "float":
            return float(text) in {float(v) for v in values}
    except ValueError:
        return None  # argparse's "invalid int value": the type check's business
    return None


# vLLM's own converters that return None for "" and "None" and the text otherwise
# (vllm==0.6.0:vllm/engine/arg_utils.py nullable_str; vllm==0.8.5:vllm/engine/arg_utils.py optional_type)
_NULLABLE = {"other:nullable_str": "optional:str", "other:optional_type(str)": "optional:str"}


def _is_int(v: str) -> bool:
    return v.lstrip("-").isdigit()


def _accepting(engine: str, option: str, text: str) -> list[str]:
    """The releases read whose choices for `option` list `text`."""
    out = []
    for release in _order(engine):
        run = entry(engine, option, release)
        if run is not None and accepts(run, text):
            out.append(release)
    return out


def _refused_everywhere(engine: str, option: str, text: str) -> bool:
    """No release read that has `option` takes `text`: each lists its choices and none lists it."""
    having = _having(engine, option)
    verdicts = [accepts(run, text) if (run := entry(engine, option, r)) is not None else True for r in having]
    return bool(verdicts) and all(v is False for v in verdicts)


def _having(engine: str, option: str) -> list[str]:
    """The releases read that have `option` (the table's `flags` runs)."""
    order = list(_order(engine))
    out: list[str] = []
    for run in facts.load(engine, "flag_sets")["flags"].get(option, ()):
        a, _, b = run.partition("..")
        out += order[order.index(a) : order.index(b or a) + 1]
    return out


@cache
def _order(engine: str) -> tuple[str, ...]:
    return tuple(facts.load(engine, "flag_sets")["releases"]) if facts.has_table(engine, "flag_sets") else ()


def _spans(engine: str, releases: list[str]) -> str:
    """Consecutive releases as runs: '0.6.0 to 0.6.6, 0.8.0'."""
    order = _order(engine)
    index = [order.index(r) for r in releases]
    runs: list[list[int]] = []
    for i in index:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(order[a] if a == b else f"{order[a]} to {order[b]}" for a, b in runs)


def value_issue(
    d: Deployment, engine: str, option: str, text: str, where, pin, parser: str, env: str
) -> Issue | None:
    """The KV005 of a value the release in force refuses for `option`, or None."""
    if option not in _runs(engine):
        return None  # no release read gives it choices
    label = display(engine)
    said = show(text, 60)
    if pin.certain:
        runs = [entry(engine, option, r) for r in pin.releases]
        verdicts = [accepts(r, text) if r is not None else True for r in runs]
        if not verdicts or any(v is not False for v in verdicts):
            return None
        run = runs[0]
        assert run is not None
        release = pin.releases[0] if len(pin.releases) == 1 else f"{pin.releases[0]} to {pin.releases[-1]}"
        others = _accepting(engine, option, text)
        hint = f" ({label} {_spans(engine, others)} accept it)" if others else ""
        return Issue(
            UNPARSED_SETTING,
            f"{label} {release} refuses {option} {said!r}{_from(env)}{hint}: its {_parser(parser)} exits at start-up"
            f' with "{_refusal(parser, option, said)}"; it takes {_listed(run["values"])} ({pin.why})',
            where or d.where,
            fix=f"run a release that takes it, or write one of {_listed(run['values'])}"
            if others
            else _fix(text, run["values"], option),
            severity=Severity.ERROR,
        )
    if not _reaches_newest(engine) or not _refused_everywhere(engine, option, text):
        return None
    first, last = _order(engine)[0], _order(engine)[-1]
    values = sorted({v for rs in _runs(engine)[option] for v in rs[1].get("values", ())})
    return Issue(
        UNPARSED_SETTING,
        f"{label}: {option} {said!r}{_from(env)} is not a value any release kvlint read takes ({first} to {last});"
        f" {pin.why}: {label} exits at start-up on it unless the release in force takes it",
        where or d.where,
        fix=_fix(text, values, option),
    )


@cache
def _reaches_newest(engine: str) -> bool:
    """The choices were read up to the newest release kvlint knows of: a release not pinned is then one
    of those read (or older). SGLang's were read to 0.5.13.post1 while 0.5.14 on (dataclass-made flags,
    not read) exist: a value those added would be warned of on every unpinned image."""
    if not facts.has_table(engine, "releases"):
        return False
    return _order(engine)[-1:] == (facts.load(engine, "releases").get("newest_read"),)


def _from(env: str) -> str:
    return f" (from {env})" if env else ""


def _parser(parser: str) -> str:
    return f"{parser} parser" if parser in ("clap", "click") else "argparse"


def _refusal(parser: str, option: str, said: str) -> str:
    """The parser's own words (clap 4 error.rs ErrorKind::InvalidValue; CPython argparse _check_value),
    up to the list of values, which each prints in its own order."""
    if parser == "clap":
        return f"error: invalid value '{said}' for '{option} <{option[2:].upper().replace('-', '_')}>'"
    if parser == "click":  # click 8 types.py Choice.get_invalid_choice_message
        return f"Error: Invalid value for '{option}': '{said}' is not one of …"
    return f"argument {option}: invalid choice: '{said}' (choose from …)"


def _listed(values: list[str]) -> str:
    return ", ".join(values[:12]) + (", …" if len(values) > 12 else "")


def _fix(text: str, values: list[str], option: str) -> str:
    """A did-you-mean: the one value the text is the start of (`bfloat` -> bfloat16, not float), else the
    closest by difflib."""
    import difflib  # only for a value the release refuses

    offered = [v for v in values if v != "None"]
    started = [v for v in offered if text and v.startswith(text)]
    close = started if len(started) == 1 else difflib.get_close_matches(text, offered, n=1, cutoff=0.6)
    if close:
        return f"did you mean {option} {close[0]}?"
    shown = ", ".join(v for v in values[:12] if v != "None")
    return f"use one of {shown}" + (", …" if len(values) > 12 else "")


def ambiguous_issue(
    d: Deployment, engine: str, said: str, matches: list[str], where, pin, union: tuple[str, ...]
) -> Issue | None:
    """The KV005 of a prefix: at a pinned release, argparse's error when several of its options start
    with it (`matches`: that release's); unpinned, kvlint's warning when several options of the releases
    read do (`union`)."""
    label = display(engine)
    if pin.certain:
        if len(matches) < 2:
            return None  # one option of the release in force: argparse takes it
        release = pin.releases[0] if len(pin.releases) == 1 else f"{pin.releases[0]} to {pin.releases[-1]}"
        listed = ", ".join(matches[:6]) + (", …" if len(matches) > 6 else "")
        return Issue(
            UNPARSED_SETTING,
            f"{label} {release}: {said} is a prefix of {len(matches)} options: its argparse exits at start-up with"
            f" 'ambiguous option: {said} could match {listed}' ({pin.why})",
            where or d.where,
            fix=f"write the option in full: {' or '.join(matches[:3])}",
            severity=Severity.ERROR,
        )
    return Issue(
        UNPARSED_SETTING,
        f"{label}: ambiguous option {said}: could be {', '.join(union[:4])}"
        + (" …" if len(union) > 4 else ""),
        where or d.where,
    )
