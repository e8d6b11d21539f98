"""Write parsed engine options onto a Deployment, converting and locating each value."""

from __future__ import annotations

from collections.abc import Callable

from kvlint.bounds import FIELDS as BOUNDS
from kvlint.bounds import FINDINGS_PER_RULE_MAX, show
from kvlint.codes import UNPARSED_SETTING
from kvlint.deployment import Deployment, Value, stated
from kvlint.extract.pod.argv import OVERSIZE, Token
from kvlint.extract.pod.engine_args.options import Parsed, truthy
from kvlint.fileio import json_value
from kvlint.findings import Issue, Severity
from kvlint.record import fields
from kvlint.units import parse_count, parse_size

# kind -> converter; each returns (value, suffix-note or "")


def _tokens(text: str):
    c = parse_count(text)
    return c.value, c.suffix


def _int(text: str):
    return int(text), ""


def _float(text: str):
    return float(text), ""


def _text(text: str):
    return text, ""


def _bytes(text: str):
    try:
        return _tokens(text)
    except ValueError:
        return parse_size(text).bytes, ""


CONVERT = {"tokens": _tokens, "int": _int, "float": _float, "text": _text, "bytes": _bytes}
FIELDS = set(fields(Deployment))


def put(d: Deployment, target: str, value, where, note: str = "") -> None:
    """Set a Deployment field, or an engine-specific knob in d.extra."""
    v: Value = stated(value, where, note)
    if target in FIELDS:
        setattr(d, target, v)
    else:
        d.extra[target] = v


def apply(
    d: Deployment,
    parsed: Parsed,
    mapping: dict[str, tuple[str, str]],
    engine_label: str,
    needed: set[str],
    refuses: Callable[[str, str, Token], str | None] | None = None,
) -> None:
    """mapping: canonical option -> (target field, kind). `needed` names options whose value kvlint
    needs; problems on those become KV005 issues (others are the engine's business). `refuses(option,
    kind, value)`: the engine's own parser message for a value kvlint cannot read and the engine's parser
    rejects at start-up (an error), or None (kvlint's own warning)."""
    for tok, message in parsed.problems:
        d.issues.append(Issue(UNPARSED_SETTING, f"{engine_label}: {message}", tok.where or d.where))
    for option, (target, kind) in mapping.items():
        hit = parsed.get(option)
        if hit is None:
            continue
        flag, value, negated = hit
        where = (value.where if value is not None and value.where is not None else flag.where) or d.where
        if kind in ("bool", "bool-inverted"):
            truth = truthy(value, negated)
            if truth is None:
                d.issues.append(
                    Issue(
                        UNPARSED_SETTING,
                        f"{engine_label}: {option} expects true or false, got {show(value.text, 60)!r}",  # type: ignore[union-attr]
                        where,
                    )
                )
                continue
            put(d, target, truth if kind == "bool" else not truth, where)
            continue
        assert value is not None
        if value.unresolved:
            if OVERSIZE in value.unresolved:  # always said: the value is unknown whether needed or not
                d.unreadable.append(target)
                d.issues.append(
                    Issue(
                        UNPARSED_SETTING,
                        f"{engine_label}: {option} {show(value.text, 60)!r} expands its variables past "
                        f"{OVERSIZE.strip('()')}; kvlint does not follow it and its value is unknown",
                        where,
                        fix="write the value, or a variable that holds it",
                    )
                )
            elif option in needed:
                d.unreadable.append(target)
                d.issues.append(
                    Issue(
                        UNPARSED_SETTING,
                        f"{engine_label}: {option} {show(value.text, 60)} uses "
                        f"{', '.join('$' + v for v in value.unresolved)}, "
                        "which the container does not set; its value is unknown",
                        where,
                        fix="set the variable in the container's env, or write the value",
                        unset=tuple(value.unresolved),
                    )
                )
            continue
        try:
            converted, suffix = CONVERT[kind](value.text.strip())
        except (ValueError, ArithmeticError):
            accepted = BOUNDS.get(target)
            said = refuses(option, kind, value) if refuses is not None else None
            d.issues.append(
                Issue(
                    UNPARSED_SETTING,
                    (
                        f"{engine_label}: {said}"
                        if said
                        else f"{engine_label}: cannot read {option} {show(value.text, 60)!r}"
                    )
                    + (f"; kvlint accepts {accepted.describe()}" if accepted is not None else ""),
                    where,
                    severity=Severity.ERROR if said else None,
                )
            )
            if option in needed:
                d.unreadable.append(target)
            continue
        note = value.note
        if suffix:
            d.suffixes[target] = (value.text.strip(), where)
        put(d, target, converted, where, note)


def report_unknown(d: Deployment, parsed: Parsed, message: str, fix: str | None = None) -> None:
    """A KV005 for every option the engine does not have; `message` names it as `{name}`. Past
    FINDINGS_PER_RULE_MAX, one issue counts the rest (an args list of 80,000 made-up flags)."""
    for tok in parsed.unknown[:FINDINGS_PER_RULE_MAX]:
        name = tok.text.split("=", 1)[0]
        d.issues.append(
            Issue(UNPARSED_SETTING, message.format(name=show(name, 80)), tok.where or d.where, fix=fix)
        )
    more = len(parsed.unknown) - FINDINGS_PER_RULE_MAX
    if more > 0:
        tok = parsed.unknown[FINDINGS_PER_RULE_MAX]
        d.issues.append(
            Issue(
                UNPARSED_SETTING,
                f"{more:,} more options the engine does not have, not listed",
                tok.where or d.where,
            )
        )


def env_value(env: dict, name: str) -> Token | None:
    var = env.get(name)
    if var is None or var.value is None:
        return None
    return Token(var.value, var.where, f"env {name}")


def override_model(
    d: Deployment, parsed: Parsed, engine_label: str, json_options: tuple[str, ...], keyed: dict[str, str]
) -> None:
    """Options that change the model's config: JSON objects (`--hf-overrides '{"rope_scaling": …}'`)
    and single keys (`--rope-theta 1e6` -> rope_theta). Kept on the deployment as `model_overrides`,
    applied to the model before the capacity rules run; JSON that does not parse is a KV005."""

    found: dict = {}
    names: list[str] = []
    where = None
    for option in json_options:
        hit = parsed.get(option)
        if hit is None or hit[1] is None:
            continue
        value = hit[1]
        try:
            data = json_value(value.text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            d.issues.append(
                Issue(
                    UNPARSED_SETTING,
                    f"{engine_label}: {option} expects a JSON object, got {value.text!r}; the model it changes is unknown",
                    value.where or d.where,
                )
            )
            d.unreadable.append("model_overrides")
            continue
        found.update(data)
        names.append(option)
        where = where or value.where
    for option, key in keyed.items():
        hit = parsed.get(option)
        if hit is None or hit[1] is None:
            continue
        text = hit[1].text
        try:
            found[key] = json_value(text)
        except ValueError:
            found[key] = text
        names.append(option)
        where = where or hit[1].where
    if found:
        d.extra["model_overrides"] = stated(found, where or d.where, f"{engine_label} {', '.join(names)}")
