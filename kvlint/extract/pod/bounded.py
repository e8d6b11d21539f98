"""The last step of every reader: each number a Deployment holds is checked against kvlint/bounds.py.

Whatever reader filled it (native spec, Kubernetes args or env, Helm values, Ray, SkyPilot, a
vLLM config file), a value outside its accepted range becomes a located issue naming the range —
KV001 in kvlint's own spec (its schema), KV005 elsewhere (an engine setting kvlint cannot use) —
and the value is dropped and marked unreadable, so nothing downstream computes with it.
Fractions that are finite but outside (0, 1] stay for KV208, which reports them as the engine
does, and are still marked unreadable so no plan is built from them.
"""

from __future__ import annotations

from kvlint.bounds import ARCHITECTURE, BUDGET, BUDGET_BYTES, FIELDS, Range, show
from kvlint.codes import INVALID_INPUT, UNPARSED_SETTING, IssueCode
from kvlint.deployment import Deployment, Value
from kvlint.findings import Issue, Severity
from kvlint.load.tree import Node, Scalar
from kvlint.units import Size

# Fractions a rule reports itself (KV208) stay on the deployment only while arithmetic on them is
# harmless; 7.8e297 x the GPU's bytes overflows, so beyond this they are refused like any value.
OWNED_SPAN = 1e6


def _refuse(
    d: Deployment, code: IssueCode, key: str, v: Value, r: Range, value: object, why: str, label: str = ""
) -> None:
    d.issues.append(
        Issue(
            code,
            f"{label or r.what} {show(value)} {why}: kvlint accepts {r.describe()}",
            v.where or d.where,
            fix=f"write {r.describe()}",
        )
    )
    if key not in d.unreadable:
        d.unreadable.append(key)


def check(d: Deployment) -> None:
    """Drop (and report) every out-of-range number on `d`; engine defaults are kvlint's own and pass."""
    code: IssueCode = INVALID_INPUT if d.kind == "ServingSpec" else UNPARSED_SETTING
    for key, r in FIELDS.items():
        holder = d.extra if key in d.extra else None
        v = d.extra.get(key) if holder is not None else getattr(d, key, None)
        if not isinstance(v, Value) or v.origin == "default":
            continue
        why = r.problem(v.value)
        if why is None:
            continue
        if (
            r.owner and why == "is out of range" and abs(v.value) <= OWNED_SPAN
        ):  # KV208 says it the engine's way
            if key not in d.unreadable:
                d.unreadable.append(key)
            continue
        _refuse(d, code, key, v, r, v.value, why)
        d.suffixes.pop(key, None)  # "9…9k" as written: nothing reads it once the value is refused
        if holder is not None:
            del holder[key]
        else:
            setattr(d, key, None)
    for key, v in list(d.architecture.items()):
        r = ARCHITECTURE.get(key)  # type: ignore[assignment]
        why = r.problem(v.value) if r is not None else None
        if r is not None and why is not None:
            _refuse(d, code, f"architecture.{key}", v, r, v.value, why)
            del d.architecture[key]
    for key, v in list(d.budget.items()):
        value = v.value.bytes if isinstance(v.value, Size) else v.value
        r = BUDGET.get(key, BUDGET_BYTES)
        why = r.problem(value)
        if why is not None:
            _refuse(d, code, f"budget.{key}", v, r, value, why, label=f"budget.{key}")
            del d.budget[key]


def crd_int(
    node: Node | None, file: str, what: str, lo: int, hi: int, source: str
) -> tuple[int | None, Issue | None]:
    """An integer field of a custom resource: (its value, None); (None, None) when it is left out (or null);
    (None, a located KV005 warning) when it is not a whole number from lo to hi. The API server
    rejects a value of the wrong type and the operator one below `lo` (`source` says where), so no
    figure is computed from it and no default is put in its place."""
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return None, None  # `key:` with no value (null) is left out, as the API server reads it
    value = node.value if isinstance(node, Scalar) else None
    if isinstance(value, int) and not isinstance(value, bool):
        if lo <= value <= hi:
            return value, None
        if value < lo:
            problem = f"{show(value)} is below {lo:,}: {source}"
        else:
            problem = f"{show(value)} is out of range: kvlint accepts a whole number from {lo:,} to {hi:,}"
    else:
        shown = repr(show(value)) if isinstance(value, str) else show(value)
        problem = (
            f"{shown if isinstance(node, Scalar) else '(a list or map)'} is not a whole number: {source}"
        )
    return None, Issue(
        UNPARSED_SETTING,
        f"{what} {problem}",
        node.where(file),
        fix=f"write a whole number from {lo:,} to {hi:,}",
        severity=Severity.WARNING,
    )
