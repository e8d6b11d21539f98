"""Model resolution, measured three ways (a script, not a test): the report issue 24 asks for.

    python benchmarks/resolution.py [--list]

1. **Ids from real deployments** (benchmarks/model_coverage.py's collection: the corpus and the vLLM
   logs, when ../shared is beside the repository): the share kvlint resolves offline.
2. **Derived ids with a known true base** (tests/data/derived_ids.txt, each row naming where it was seen,
   and tests/data/not_derived_ids.txt, ids that must match nothing): how many resolve by name to their true
   base with the weight format the name states, and the wrong matches - a name pinned on another model's
   architecture, or a must-not-match id that matched. The target is 0 wrong matches.
3. **Weights against published totals** (benchmarks/published_weights.yaml): the GGUF file sizes a
   quantizer published per file type, priced by kvlint from the base's config and the file type's tensor
   roles; the makers' stated parameter totals against kvlint's count from the config; and the exact byte
   totals of published safetensors checkpoints against the weights kvlint prices for them. Median, p90 and
   max of the signed error, by group. A quantizer's own recipe (bartowski's `_L`/`_XL`) is no llama.cpp
   file type: kvlint must leave it unpriced, and the report counts any such row it priced.

Nothing in 3 was fitted: the pricing was written from llama.cpp's source before the rows were gathered.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from kvlint.capacity.weights import weights  # noqa: E402
from kvlint.catalog import models  # noqa: E402


def _pct(values: list[float]) -> str:
    if not values:
        return "-"
    ranked = sorted(abs(v) for v in values)
    p90 = ranked[min(len(ranked) - 1, round(0.9 * (len(ranked) - 1)))]
    return f"{statistics.median(ranked):.2f} / {p90:.2f} / {ranked[-1]:.2f} % (n = {len(values)})"


def real_deployments() -> list[str]:
    """model_coverage.py's own totals (it collects the ids and needs ../shared beside the repository)."""
    if not (ROOT.parent / "shared" / "corpus").is_dir():
        return ["ids from real deployments: ../shared is not beside the repository; not measured"]
    cmd = [sys.executable, str(ROOT / "benchmarks" / "model_coverage.py")]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False).stdout.splitlines()
    return ["ids from real deployments (benchmarks/model_coverage.py):"] + [f"  {line}" for line in out[:2]]


def derived(show: bool) -> list[str]:
    import test_name_rules as rules  # the tables the test reads

    from kvlint.catalog import name_audit

    judged = name_audit.judge_derived(rules.DERIVED)
    wrong_nd = name_audit.judge_not_derived(rules.NOT_DERIVED)
    known = judged.known
    out = [
        f"derived ids (true base known to kvlint): {len(judged.right)} of {known} resolved to their true base and "
        f"format = {100 * len(judged.right) / max(1, known):.1f} %; {len(judged.unknown_base)} more whose base is "
        "not catalogued stayed unknown",
        f"wrong matches: {len(judged.wrong) + len(wrong_nd)} (derived {len(judged.wrong)}, must-not-match "
        f"{len(wrong_nd)} of {len(rules.NOT_DERIVED)})",
    ]
    if show:
        out += [f"  {w}" for w in judged.wrong + wrong_nd]
    return out


def _file_gb(reference: str) -> float | None:
    """GB kvlint prices for a GGUF file of that name: the weights it loads, plus a multi-token-prediction
    layer the file holds but llama.cpp does not load (at the average width of the priced layers)."""
    r = models.resolve(reference)
    if r.arch is None or r.unpriced:
        return None
    w = weights(r.arch, 1, 1).total
    layer_params = sum(p.attn + p.mlp + p.experts for p in r.arch.layer_params)
    mtp = r.arch.mtp_params * (w / max(1, r.arch.params)) if layer_params else 0
    return (w + mtp) / 1e9


def published(show: bool) -> list[str]:
    data = YAML(typ="safe").load((ROOT / "benchmarks" / "published_weights.yaml").read_text())
    out: list[str] = []
    k_quants: list[float] = []
    i_quants: list[float] = []
    priced_custom: list[str] = []
    rows: list[str] = []
    by_base: dict[str, list[float]] = {}
    for group in data["gguf"]:
        base = group["base"]
        for quant, gb in group["sizes"].items():
            got = _file_gb(f"{base}-{quant}-GGUF")
            if got is None:
                rows.append(f"  {base} {quant}: not priced")
                continue
            err = 100 * (got - gb) / gb
            (i_quants if quant.startswith("IQ") else k_quants).append(err)
            by_base.setdefault(base, []).append(err)
            rows.append(f"  {base} {quant}: {got:.2f} GB priced, {gb:.2f} GB published ({err:+.1f} %)")
        for quant, gb in (group.get("custom") or {}).items():
            got = _file_gb(f"{base}-{quant}-GGUF")
            if got is not None:
                priced_custom.append(f"  {base} {quant}: priced {got:.2f} GB, published {gb:.2f} GB")
    out.append(f"GGUF files, K- and legacy quants: {_pct(k_quants)}")
    out.append(f"GGUF files, I-quants: {_pct(i_quants)}")
    for base, errs in by_base.items():
        out.append(f"  {base}: {_pct(errs)}")
    out.append(
        f"quantizer recipes that are no llama.cpp file type, priced anyway (should be 0): {len(priced_custom)}"
    )
    params: list[float] = []
    prow: list[str] = []
    for row in data["params"]:
        arch = models.resolve(row["id"]).arch
        if arch is None:
            prow.append(f"  {row['id']}: not resolved")
            continue
        err = 100 * (arch.params - row["total"]) / row["total"]
        params.append(err)
        prow.append(
            f"  {row['id']}: {arch.params / 1e9:.2f}B counted, maker says {row['says']!r} ({err:+.2f} %)"
        )
    out.append(f"parameter totals against the makers' figures: {_pct(params)}")
    stored, srow = _checkpoints(data.get("checkpoints") or [])
    out.append(f"safetensors checkpoint totals against the weights kvlint prices: {_pct(stored)}")
    if show:
        out += rows + priced_custom + prow + srow
    return out


def _checkpoints(rows: list[dict]) -> tuple[list[float], list[str]]:
    """Signed error of the weights kvlint prices (TP 1) against each checkpoint's stored byte total."""
    errors: list[float] = []
    lines: list[str] = []
    for row in rows:
        arch = models.resolve(row["id"]).arch
        if arch is None:
            lines.append(f"  {row['id']}: not resolved")
            continue
        got = weights(arch, 1, 1).total
        err = 100 * (got - row["bytes"]) / row["bytes"]
        errors.append(err)
        lines.append(
            f"  {row['id']}: {got / 1e9:.2f} GB priced, {row['bytes'] / 1e9:.2f} GB stored ({err:+.2f} %)"
        )
    return errors, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print every row, not only the totals")
    args = ap.parse_args()
    for line in real_deployments() + derived(args.list) + published(args.list):
        print(line)


if __name__ == "__main__":
    main()
