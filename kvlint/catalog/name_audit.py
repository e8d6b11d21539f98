"""The name rules judged against tables of real ids: each derived id (a quantized copy, a renamed
organisation, a format suffix) must resolve to its true base with the weight format its name says, and
each must-not-match id must stay unknown or match only its own model. tests/test_name_rules.py holds the
rules to it; benchmarks/resolution.py prints the same judgement as figures.

A table row is `id | true base | format | where it was seen` (derived) or `id | why it must not match`.
Formats: base, fp8, int8, int4, nf4, fp4, gguf N (bits per weight), gguf / unpriced (weights left unpriced).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kvlint.catalog import models
from kvlint.catalog.arch import ModelArch
from kvlint.catalog.name_rules import split_quant, stem


def facts(a: ModelArch) -> tuple:
    """What makes two architectures the same model for the KV and weight arithmetic."""
    return (
        a.layers,
        a.hidden_size,
        a.kv_heads,
        a.head_dim,
        a.vocab_size,
        a.num_experts,
        a.layer_kinds,
        a.max_positions,
    )


def weight_format(a: ModelArch, base: ModelArch, unpriced: str = "") -> str:
    """The format a resolved id's weights are priced in, in the tables' words."""
    q = a.quant
    if unpriced:
        return "gguf" if "GGUF" in unpriced else "unpriced"
    if q is not None and q.method == "gguf":
        return f"gguf {q.bits:g}"
    if q == base.quant:
        return "base"
    assert q is not None
    if q.method in ("nvfp4", "mxfp4"):
        return "fp4"
    if q.method == "bitsandbytes":
        return "nf4"
    if q.method == "fp8":
        return "fp8"
    return "int8" if q.bits >= 8 else "int4"


def matched_base(how: str) -> str:
    """The catalogued id a name match used (`matched by name: BASE + …`)."""
    return how.split(": ", 1)[1].split(" + ", 1)[0]


@dataclass
class Judged:
    right: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)  # "id: what went wrong"
    unknown_base: list[str] = field(default_factory=list)  # the true base is not catalogued: stayed unknown
    missed: list[str] = field(default_factory=list)  # the base is catalogued but the id was not resolved

    @property
    def known(self) -> int:
        return len(self.right) + len(self.wrong) + len(self.missed)


def judge_derived(rows: Iterable[Sequence[str]]) -> Judged:
    """Each derived row through the name rules alone (even where the id is catalogued exactly)."""
    out = Judged()
    for ident, true_base, fmt, *_seen in rows:
        expected = models.resolve(true_base).arch
        got = models._by_name(ident, has_org=True)
        if expected is None:  # kvlint does not know the base: the name must not be pinned on another model
            if got.arch is None:
                out.unknown_base.append(ident)
            else:
                out.wrong.append(f"{ident}: base not catalogued, yet matched: {got.how}")
            continue
        if got.arch is None:
            out.missed.append(ident)
            continue
        if facts(got.arch) != facts(expected):
            out.wrong.append(f"{ident}: {got.how} (true base {true_base})")
            continue
        base = models.resolve(matched_base(got.how)).arch
        said = weight_format(got.arch, base, got.unpriced) if base is not None else "no base"
        if said != fmt:
            out.wrong.append(f"{ident}: weight format {said} differs from the name's {fmt}")
            continue
        if not got.how.startswith("matched by name: ") or (
            fmt != "base" and "(from the name)" not in got.how
        ):
            out.wrong.append(
                f"{ident}: resolved, but its provenance does not say it came from the name: {got.how}"
            )
            continue
        out.right.append(ident)
    return out


def judge_not_derived(rows: Iterable[Sequence[str]]) -> list[str]:
    """Must-not-match ids that matched another model ("id: what it matched"). One catalogued since the row was
    written under its own name, or a quantized copy of its own catalogued base (same stem), is allowed."""
    wrong = []
    for ident, *_why in rows:
        got = models._by_name(ident, has_org=True)
        if got.arch is None:
            continue
        base = matched_base(got.how)
        if stem(base.split("/")[-1]) != stem(split_quant(ident.split("/")[-1])[0]):
            wrong.append(f"{ident}: must not match, matched {got.how}")
    return wrong
