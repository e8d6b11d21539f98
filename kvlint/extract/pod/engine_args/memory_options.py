"""Engine options that change GPU memory, the KV pool, the context or concurrency: what kvlint does with each.

One table per engine (kvlint/engines/<engine>/data/memory_options.json, read by the engine's
`memory_options()`): option (or environment variable) -> `MemoryOption`. Status:
- `modelled`: `applied_by` names the function that applies it (tests/test_memory_options.py checks the
  function exists and reads `target`, the deployment field or `extra` key the reader writes);
- `not modelled`: `changes` says what it changes that kvlint's plan leaves out, `source` the engine
  line that says so. A deployment that states it gets a KV004 info at the option (`report`), unless
  `said_by` names the plan note that already says it (LoRA);
- `no effect`: read or known, but it changes none of the memory kvlint sizes (`changes` says why).
Every option an engine reader writes onto the deployment is in its table (the test fails otherwise),
so an option cannot be read and then silently ignored.
"""

from __future__ import annotations

import json

from kvlint.codes import NOT_CHECKABLE
from kvlint.deployment import Deployment
from kvlint.engines.memory_entry import MODELLED, NO_EFFECT, NOT_MODELLED, MemoryOption
from kvlint.extract.pod.argv import EnvVar
from kvlint.extract.pod.engine_args.apply import env_value
from kvlint.extract.pod.engine_args.options import Parsed, json_value
from kvlint.findings import Issue, IssueKind, Location, Severity


def report(
    d: Deployment,
    parsed: Parsed,
    table: dict[str, MemoryOption],
    label: str,
    env: dict[str, EnvVar] | None = None,
    env_forms: bool = False,
) -> None:
    """A KV004 info at each option the deployment states whose memory kvlint's plan leaves out (`table`: the
    engine's memory options, `label` its name in messages). `env`: the container's environment, for entries
    that are environment variables (VLLM_ALL2ALL_BACKEND) and, with `env_forms` (TGI), the launcher's
    environment forms of its options (--speculate or SPECULATE). The issues are of kind
    OPTION_NOT_MODELLED: resolve drops them where no plan is made (a KV004, KV003 or KV005 says why)."""
    said: list[Issue] = []
    for option, entry in table.items():
        if entry.status != NOT_MODELLED or entry.said_by:
            continue
        found = _stated(d, parsed, option, env_forms, env or {})
        if found is None:
            continue
        where, text = found
        extra = entry.detail(text) if entry.detail is not None else ""
        if extra is None:
            continue
        said.append(
            Issue(
                NOT_CHECKABLE,
                f"{label} {option}: {entry.changes}{extra} ({entry.source}); kvlint's plan leaves this "
                "out, so its capacity figures are for the deployment without it",
                where,
                severity=Severity.INFO,
                kind=IssueKind.OPTION_NOT_MODELLED,
            )
        )
    d.issues.extend(said)


def _stated(
    d: Deployment, parsed: Parsed, option: str, env_forms: bool, env: dict[str, EnvVar]
) -> tuple[Location, str] | None:
    """Where the option (or environment variable) is stated and its value as written; None if it is not."""
    hit = parsed.get(option)
    if hit is not None:
        flag, value, _ = hit
        where = (value.where if value is not None and value.where is not None else flag.where) or d.where
        return where, value.text if value is not None else ""
    dotted = {k: v for k, v in parsed.values.items() if k.startswith(option + ".") and v[1] is not None}
    if dotted:  # `--compilation-config.cudagraph_mode PIECEWISE`: the keys as one JSON object
        first = next(iter(dotted.values()))
        keys = {k[len(option) + 1 :]: _json_or_text(v[1].text) for k, v in dotted.items()}  # type: ignore[union-attr]
        return (first[1].where or first[0].where or d.where), json.dumps(keys)  # type: ignore[union-attr]
    name = (
        option if not option.startswith("--") else option[2:].upper().replace("-", "_") if env_forms else ""
    )
    tok = env_value(env, name) if name else None
    return ((tok.where or d.where), tok.text) if tok is not None else None


def _json_or_text(text: str):
    try:
        return json_value(text)
    except ValueError:
        return text


__all__ = ["MODELLED", "NOT_MODELLED", "NO_EFFECT", "MemoryOption", "report"]
