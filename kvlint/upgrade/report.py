"""`kvlint upgrade`'s report: text for a person, JSON (version 1) for a program."""

from __future__ import annotations

import json

from kvlint import engines
from kvlint.units import GIB, gib
from kvlint.upgrade import releases
from kvlint.upgrade.deployments import Step, Walk
from kvlint.upgrade.rows import RowChange
from kvlint.upgrade.walk import State


def verdict(s: State) -> str:
    """ "fits", or the worst severity and the codes: "error: KV102"."""
    if s.worst is None:
        return "fits"
    return f"{s.worst.label}: {', '.join(s.codes)}"


def pool(s: State, change: float | None = None) -> str:
    if s.kv_tokens is None or s.kv_bytes is None:
        return "no KV pool planned"
    moved = f" ({change:+.1%})" if change is not None else ""
    if s.kv_bytes < 0:  # the plan's budget is overdrawn before any KV cache
        return f"KV pool {s.kv_tokens:,} tokens{moved}: the memory budget is overdrawn by {gib(-s.kv_bytes)} per GPU"
    return f"KV pool {s.kv_tokens:,} tokens{moved}, {gib(s.kv_bytes)} per GPU"


MOVE_BYTES = 1 << 20  # a memory term that moves by less than 1 MiB is not named


def moves(before: State, after: State) -> list[str]:
    """The plan's terms that moved between two states, in words: "CUDA graphs +0.25 GiB"."""
    old, new = dict(before.terms), dict(after.terms)
    pairs = [("memory budget", before.budget, after.budget)] + [
        (k, old.get(k), new.get(k)) for k in dict.fromkeys([*old, *new])
    ]
    out = []
    for label, a, b in pairs:
        if a is None and b is None or a is not None and b is not None and abs(b - a) < MOVE_BYTES:
            continue
        if a is None:
            out.append(f"{label} {gib(b or 0)} (new)")
        elif b is None:
            out.append(f"{label} gone (was {gib(a)})")
        else:
            out.append(f"{label} {'+' if b > a else '-'}{gib(abs(b - a))}")
    return out


def _new(step: Step, before: State) -> list:
    """The step's findings whose rule was not reported before, else all of them."""
    fresh = [f for f in step.state.findings if f.rule not in before.codes]
    return fresh or list(step.state.findings)


def summary(w: Walk) -> str:
    """One line: the start's verdict, and the first release that changes it, why, and what to do."""
    assert w.first is not None
    head = f"{verdict(w.first)} at {w.start.release}"
    prev = w.first
    for step in w.steps:
        if step.state.verdict != prev.verdict:
            keys = (
                ", ".join(moves(prev, step.state))
                or ", ".join(r.key for r in step.rows_here or step.rows)
                or "no release-table row changed"
            )
            first = _new(step, prev)[:1]
            what = verdict(step.state)
            if first and first[0].fix:
                what += f", {first[0].fix}"
            return f"{head}; from {step.state.release} ({keys}): {what}"
        prev = step.state
    if w.steps:
        last = w.steps[-1].state
        return f"{head}; the verdict holds, the KV pool moves ({pool(last)} at {last.release})"
    return head + "; no later release changes it"


def _row(r: RowChange) -> str:
    return f"      {r.key}: {r.before} -> {r.after} (since {r.since}; {r.source})"


def _rows_text(step: Step) -> list[str]:
    """The rows this release brings (from the release read before it), then those of the releases
    between it and the one printed before."""
    here, earlier = step.rows_here, step.rows_earlier
    out = [
        f"    release-table rows changed from {step.before} to {step.state.release}:"
        if here
        else f"    no release-table row changed from {step.before} to {step.state.release}"
        + ("" if earlier else " (the change is in kvlint's engine code for it)")
    ]
    out += [_row(r) for r in here]
    if earlier:
        out.append(f"    and from {step.since} to {step.before}:")
        out += [_row(r) for r in earlier]
    return out


def _text_walk(w: Walk) -> list[str]:
    out = [f"{w.file}:{w.line}: {w.label} ({engines.display(w.engine) if w.engine else 'no engine'})"]
    if w.first is None:
        return [*out, f"  not walked: {w.skipped}"]
    out.append(f"  {summary(w)}")
    out.append(f"  {w.start.release} ({w.start.how}): {verdict(w.first)}; {pool(w.first)}")
    prev = w.first
    for step in w.steps:
        out.append(f"  {step.state.release}: {verdict(step.state)}; {pool(step.state, step.pool_change)}")
        moved = moves(prev, step.state)
        if moved:
            out.append(f"    memory per GPU since {step.since}: {', '.join(moved)}")
        out += _rows_text(step)
        if step.state.verdict != prev.verdict:
            for f in _new(step, prev):
                out.append(f"    {f.rule} {f.severity.label}: {f.message}")
                if f.fix:
                    out.append(f"      fix: {f.fix}")
        prev = step.state
    if w.skipped:
        out.append(f"  stopped: {w.skipped}")
    last = w.walked[-1] if w.walked else w.start.release
    out.append(
        f"  {len(w.walked)} later release(s) read, up to {last}"
        if w.walked
        else f"  no later release kvlint has read (the newest: {releases.newest(w.engine) or 'none'})"
    )
    return out


def text(walks: list[Walk]) -> str:
    if not walks:
        return "no serving workload found\n"
    blocks = ["\n".join(_text_walk(w)) for w in walks]
    breaking = sum(w.breaks for w in walks)
    tail = f"{len(walks)} deployment(s); {breaking} turned from passing to an error by a later release"
    return "\n\n".join(blocks) + f"\n\n{tail}\n"


def _state(s: State) -> dict:
    return {
        "release": s.release,
        "worst": s.worst.label if s.worst is not None else None,
        "codes": list(s.codes),
        "kv_cache_tokens": s.kv_tokens,
        "kv_cache_bytes_per_gpu": s.kv_bytes,
        "kv_cache_gib_per_gpu": round(s.kv_bytes / GIB, 2) if s.kv_bytes is not None else None,
        "budget_bytes_per_gpu": s.budget,
        "terms": [{"label": k, "bytes": v} for k, v in s.terms],
        "findings": [
            {
                "rule": f.rule,
                "severity": f.severity.label,
                "message": f.message,
                "fix": f.fix,
                "line": f.where.line,
            }
            for f in s.findings
        ],
    }


def _walk_dict(w: Walk) -> dict:
    first = w.first if w.first is not None else State("", None, (), (), None, None)
    return {
        "file": w.file,
        "line": w.line,
        "deployment": w.label,
        "engine": w.engine or None,
        "start": {"release": w.start.release, "how": w.start.how, "assumed": w.start.assumed},
        "verdict": _state(w.first) if w.first is not None else None,
        "summary": summary(w) if w.first is not None else None,
        "releases_read": list(w.walked),
        "changes": [
            {
                "release": s.state.release,
                "compared_with": s.since,
                "previous_release_read": s.before,
                "kv_pool_change": round(s.pool_change, 4) if s.pool_change is not None else None,
                "memory_moves": moves(before, s.state),
                "verdict": _state(s.state),
                "rows": [
                    {
                        "key": r.key,
                        "means": r.means,
                        "before": r.before,
                        "after": r.after,
                        "since": r.since,
                        "source": r.source,
                        "at_this_release": r.after_release(s.before),
                    }
                    for r in s.rows
                ],
            }
            for before, s in zip([first, *(x.state for x in w.steps)], w.steps, strict=False)
        ],
        "breaks": w.breaks,
        "skipped": w.skipped or None,
    }


def as_json(walks: list[Walk], errors: list[str]) -> str:
    doc = {"version": 1, "deployments": [_walk_dict(w) for w in walks], "errors": errors}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


__all__ = ["as_json", "pool", "summary", "text", "verdict"]
