"""How close kvlint's engine accounting is to what vLLM really logged (a script, not a test).

    python benchmarks/accuracy.py ../shared/calibration/vllm_startup_logs.yaml [--cases]

For every scorable case whose model and GPU kvlint resolves, it builds the deployment the log
describes (model, GPU, TP/PP, utilization, max_model_len, batching, dtype, KV dtype, version),
runs kvlint's plan and compares: weights GiB, KV-cache GiB, KV tokens (relative error: median,
p90, max) and the verdict (a logged refusal to start must be predicted as an error; a case that
started must not be). Cases kvlint cannot build are counted and named, not hidden.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kvlint.catalog import gpus as gpu_catalog  # noqa: E402
from kvlint.catalog import models as model_catalog  # noqa: E402
from kvlint.deployment import Deployment, stated  # noqa: E402
from kvlint.findings import Location, Severity  # noqa: E402
from kvlint.lint import _run_rules  # noqa: E402
from kvlint.resolve import Defaults, resolve  # noqa: E402
from kvlint.rules import all_rules  # noqa: E402
from kvlint.settings import Settings  # noqa: E402

GIB = 1 << 30
# Failure classes and the rule that should predict them.
MEMORY_FAILURES = {"kv_cache_smaller_than_max_model_len", "no_memory_for_cache_blocks", "negative_kv_budget"}
PREDICTED_BY = {c: ("KV101", "KV102") for c in MEMORY_FAILURES} | {
    "config_validation_max_model_len": ("KV204",)
}


def load_yaml(path: Path):
    from kvlint.load import load_bytes
    from kvlint.load.tree import to_plain

    loaded = load_bytes(path.read_bytes(), str(path), 64 * 1024 * 1024)
    if loaded.issues:
        raise SystemExit(f"{path}: {loaded.issues[0].message}")
    return to_plain(loaded.documents[0].root, [10_000_000])


def model_ref(text: str) -> str | None:
    head = text.split(" (")[0].strip()
    if model_catalog.resolve(head).arch is not None:
        return head
    return None


def gpu_ref(text: str | None) -> str | None:
    if not text:
        return None
    if "+" in text:
        return None  # heterogeneous GPUs in one deployment: not modelled
    head = text.split(" (")[0].strip()
    for candidate in (head, *head.split()):
        if gpu_catalog.lookup(candidate) is not None:
            return candidate
    return None


def quant_of(text: str | None) -> str | None:
    if not text:
        return None
    t = text.lower()
    if "checkpoint" in t or "compressed" in t or "marlin" in t or "mxfp4" in t or "awq" in t:
        return None  # the checkpoint's own quantization_config says it
    return t.split()[0]


def build(case: dict) -> tuple[Deployment | None, str]:
    ref = model_ref(case["model"])
    if ref is None:
        return None, f"model {case['model']!r} not in the catalog"
    gpu = gpu_ref(case.get("gpu"))
    if gpu is None:
        return None, f"GPU {case.get('gpu')!r} not resolvable"
    where = Location(case["id"], 1, 1)
    d = Deployment(case["id"], where, "calibration", case["id"])
    d.engine = stated("vllm", where)
    d.model = stated(ref, where)
    d.gpu = stated(gpu, where)
    version = case.get("engine_version")
    gen = str(case.get("engine_generation") or "")
    if version:
        d.engine_version = stated(str(version).split("+")[0].split("rc")[0], where)
    elif gen.startswith("V0"):
        d.engine_version = stated("0.6.4", where)  # the V0 log format of ~0.6.4 (the case says V0)
    elif gen.startswith("V1"):
        d.engine_version = stated("0.10.0", where)  # a V1 release before CUDA-graph profiling
    s = case.get("settings") or {}
    tp = case.get("tensor_parallel_size")
    if tp:
        d.tensor_parallel = stated(int(tp), where)
    pp = case.get("pipeline_parallel_size")
    if pp:
        d.pipeline_parallel = stated(int(pp), where)
    for key, attr in (
        ("gpu_memory_utilization", "gpu_memory_utilization"),
        ("max_model_len", "max_context"),
        ("max_num_seqs", "max_sequences"),
        ("max_num_batched_tokens", "max_batched_tokens"),
        ("block_size", "block_size"),
        ("enforce_eager", "enforce_eager"),
    ):
        if s.get(key) is not None:
            setattr(d, attr, stated(s[key], where))
    if case.get("dtype"):
        d.dtype = stated(case["dtype"], where)
    if case.get("kv_cache_dtype"):
        d.kv_cache_dtype = stated(case["kv_cache_dtype"], where)
    q = quant_of(case.get("quantization"))
    if q:
        d.quantization = stated(q, where)
    return d, ""


def rel(pred: float, real: float) -> float:
    return (pred - real) / abs(real) if real else float("nan")


def summary(name: str, errors: list[float]) -> str:
    if not errors:
        return f"{name:<12} no cases"
    a = sorted(abs(e) for e in errors)
    p90 = a[min(len(a) - 1, int(round(0.9 * (len(a) - 1))))]
    return f"{name:<12} n={len(a):>2}  median {statistics.median(a):6.2%}  p90 {p90:6.2%}  max {a[-1]:6.2%}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("calibration", type=Path)
    ap.add_argument("--cases", action="store_true", help="print every case")
    args = ap.parse_args()
    data = load_yaml(args.calibration)
    rules = all_rules()
    weights_err, kv_err, tok_err = [], [], []
    verdict_ok = verdict_n = 0
    skipped: list[tuple[str, str]] = []
    rows = []
    for case in data["cases"]:
        if not case.get("scorable", True):
            skipped.append((case["id"], "scorable: false"))
            continue
        d, why = build(case)
        if d is None:
            skipped.append((case["id"], why))
            continue
        r = resolve(d, Defaults())
        findings = _run_rules(case["id"], r.issues, r, Settings(), rules)
        errors = sorted({f.rule for f in findings if f.severity == Severity.ERROR})
        m = case.get("measured") or {}
        p = r.plan
        row = {"id": case["id"], "model": d.model.value, "errors": errors, "outcome": case.get("outcome")}
        if p is not None:
            if m.get("weights_gib") is not None:
                e = rel(p.weights_per_gpu / GIB, float(m["weights_gib"]))
                weights_err.append(e)
                row["weights"] = (p.weights_per_gpu / GIB, float(m["weights_gib"]), e)
            if (
                m.get("kv_cache_gib") is not None
                and case.get("outcome") != "failed"
                or (m.get("kv_cache_gib") is not None and case.get("failure_class") in MEMORY_FAILURES)
            ):
                # every worker logs its own "Available KV cache memory"; the calibration quotes rank 0
                pool = p.stage_pools[0] if p.stage_pools else p.kv_pool
                e = rel(pool / GIB, float(m["kv_cache_gib"]))
                kv_err.append(e)
                row["kv"] = (pool / GIB, float(m["kv_cache_gib"]), e)
            if m.get("kv_cache_tokens") is not None:
                e = rel(p.kv_tokens, float(m["kv_cache_tokens"]))
                tok_err.append(e)
                row["tokens"] = (p.kv_tokens, int(m["kv_cache_tokens"]), e)
        failure = case.get("failure_class")
        if case.get("outcome") == "started":
            ok = not errors
            verdict_n += 1
            verdict_ok += ok
            row["verdict"] = "ok" if ok else f"predicted {errors} for a case that started"
        elif failure in PREDICTED_BY:
            ok = any(e in PREDICTED_BY[failure] for e in errors)
            verdict_n += 1
            verdict_ok += ok
            row["verdict"] = "ok" if ok else f"missed {failure} (predicted {errors or 'nothing'})"
        else:
            row["verdict"] = (
                f"not scored: {failure or case.get('outcome')} is not a capacity verdict kvlint makes"
            )
        rows.append(row)
    if args.cases:
        print(
            f"{'case':<7} {'model':<46} {'weights GiB pred/log':>22} {'KV GiB pred/log':>20} {'tokens pred/log':>24}  verdict"
        )
        for row in rows:
            w = row.get("weights")
            k = row.get("kv")
            t = row.get("tokens")
            fw = f"{w[0]:6.2f}/{w[1]:6.2f} {w[2]:+6.1%}" if w else "-"
            fk = f"{k[0]:6.2f}/{k[1]:6.2f} {k[2]:+6.1%}" if k else "-"
            ft = f"{t[0]:>9,}/{t[1]:>9,} {t[2]:+6.1%}" if t else "-"
            print(f"{row['id']:<7} {row['model'][:46]:<46} {fw:>22} {fk:>20} {ft:>24}  {row['verdict']}")
        print()
    print(f"calibration: {args.calibration}")
    print(f"cases: {len(data['cases'])}  evaluated: {len(rows)}  skipped: {len(skipped)}")
    for cid, why in skipped:
        print(f"  skipped {cid}: {why}")
    print(summary("weights", weights_err))
    print(summary("KV cache", kv_err))
    print(summary("KV tokens", tok_err))
    print(
        f"verdicts     {verdict_ok}/{verdict_n} agree ({verdict_ok / verdict_n:.0%})"
        if verdict_n
        else "verdicts     none"
    )
    for row in rows:
        if row["verdict"] != "ok":
            print(f"  {row['id']}: {row['verdict']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
