"""How close kvlint's engine accounting is to what vLLM, SGLang, TGI, llama.cpp, LMDeploy and TensorRT-LLM really logged (a script, not a test).

    python benchmarks/accuracy.py [--vllm PATH] [--sglang PATH] [--tgi PATH] [--llamacpp PATH] [--ollama PATH]
        [--lmdeploy PATH] [--trtllm PATH] [--vllm-tpu PATH] [--cases] [--markdown]

Defaults: ../shared/calibration/vllm_startup_logs.yaml (split by source in
benchmarks/calibration/vllm_splits.yaml) and
benchmarks/calibration/{sglang,tgi,llamacpp,ollama,lmdeploy,trtllm,vllm_tpu}_startup_logs.yaml
(each case carries its split). For every scorable case whose model and GPU kvlint resolves, it
builds the deployment the log describes, runs kvlint's plan and rules, and compares weights GiB,
KV GiB and KV tokens (relative error: median, p90, max) and the start-up verdict, scored by
failure reason (a refusal for a negative KV budget is not a context refusal). Each split is
reported separately: "fit" logs are those a kvlint constant was read off, "scored" logs were not
used for anything. Logs of a model kvlint resolves only by a name rule (a quantized or
republished copy priced from its catalogued base, kvlint/catalog/derived.py) are kept out of
both and scored on their own "matched by name" line, which checks the name rules' pricing
against logged weights. The last row of each engine replays every other case with no engine
version, the path of a user whose image has no version tag (kvlint applies the newest behaviour
it models). Cases kvlint cannot build are counted and named, not hidden.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_cases import (  # noqa: E402
    DATA,
    ENGINES,
    LLAMACPP_SERVERS,
    load_yaml,
    logged,
    named_ref,
    with_facts,
)

from kvlint.engines.tgi.plan import WARMUP_FAILS  # noqa: E402
from kvlint.findings import Severity  # noqa: E402
from kvlint.resolve import Defaults, resolve  # noqa: E402
from kvlint.rules import all_rules  # noqa: E402
from kvlint.run.lint import check_deployment  # noqa: E402
from kvlint.run.settings import Settings  # noqa: E402

GIB = 1 << 30
ROOT = Path(__file__).resolve().parents[1]
# what each logged failure class means, as the reason kvlint would give
LOGGED_REASON = {
    "negative_kv_budget": "no memory for the KV cache",
    "no_memory_for_cache_blocks": "no memory for the KV cache",
    "kv_cache_smaller_than_max_model_len": "context larger than the KV cache",
    "config_validation_max_model_len": "context beyond the model",
    "prefill_oom": "the warm-up prefill does not fit",
}
STARTS = "starts"
# Weights over the fraction's budget are no separate failure in either engine: they load, then the
# pool comes out negative and the engine says so (SGLang "Not enough memory. Please try to increase
# --mem-fraction-static", vLLM "No available memory for the cache blocks").
SAME_REASON = {"weights exceed memory": "no memory for the KV cache"}
OFF = 0.05  # a case whose KV tokens are further off than the p90 target is named


def predicted_reason(engine: str, errors: set[str], plan, context_stated: bool) -> str:
    """The start-up verdict kvlint's errors amount to, as a failure reason."""
    if "KV101" in errors:
        return "weights exceed memory"
    if "KV102" in errors and plan is not None and any(n.startswith(WARMUP_FAILS) for n in plan.notes):
        return "the warm-up prefill does not fit"  # TGI: "Not enough memory to handle N prefill tokens"
    if "KV102" in errors and plan is not None and plan.kv_pool <= 0:
        return "no memory for the KV cache"
    if "KV102" in errors:
        # vLLM refuses to start; TGI's router refuses a stated max_total_tokens above the batch
        # ("`max_total_tokens` must be <= `max_batch_total_tokens`"); SGLang starts and rejects
        # longer requests at run time.
        if engine in ("vllm", "vllm-tpu") or (engine == "tgi" and context_stated):
            return "context larger than the KV cache"
    if "KV204" in errors:
        return "context beyond the model"
    return STARTS


NAMED = "matched by name"


def is_named(case: dict) -> bool:
    """The case's model resolves only by a name rule (its base's facts, its own quantization)."""
    return named_ref(str(case.get("model") or "")) is not None


def split_of(engine: str, case: dict, vllm_fit: set[str]) -> str:
    if engine == "vllm":
        return "fit" if case.get("source", {}).get("repo") in vllm_fit else "scored"
    return str(case.get("split") or "scored")


def rel(pred: float, real: float) -> float:
    return (pred - real) / abs(real) if real else float("nan")


def stats(errors: list[float]) -> str:
    if not errors:
        return "n= 0"
    a = sorted(abs(e) for e in errors)
    p90 = a[min(len(a) - 1, int(round(0.9 * (len(a) - 1))))]
    return f"n={len(a):>2} median {statistics.median(a):6.2%} p90 {p90:6.2%} max {a[-1]:7.2%}"


NAMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "tgi": "TGI",
    "llamacpp": "llama.cpp",
    "ollama": "Ollama",
    "lmdeploy": "LMDeploy",
    "trtllm": "TensorRT-LLM",
    "vllm-tpu": "vLLM on TPU",
}
HEADER = (
    "| engine | split | logs | evaluated | KV tokens | KV GiB | weights | verdicts |\n"
    "|---|---|---|---|---|---|---|---|"
)


def _pct(x: float) -> str:
    x *= 100
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def md_stats(errors: list[float], evaluated: int) -> str:
    """docs/accuracy.md's cell: median / p90 / max %, '(n = k)' when fewer than the evaluated cases have it."""
    if not errors:
        return "—"
    a = sorted(abs(e) for e in errors)
    if len(a) == 1:
        return f"{_pct(a[0])} % (n = 1)"
    p90 = a[min(len(a) - 1, int(round(0.9 * (len(a) - 1))))]
    cell = f"{_pct(statistics.median(a))} / {_pct(p90)} / {_pct(a[-1])} %"
    return cell + (f" (n = {len(a)})" if len(a) != evaluated else "")


def md_row(engine: str, split: str, cases: list[dict], rows: list[dict], unscorable: int) -> str:
    done = [r for r in rows if "skipped" not in r]
    judged = [r for r in done if not r["verdict"].startswith("not scored")]
    logs = f"{len(cases)}" + (f" (+{unscorable} not scorable)" if unscorable else "")
    cells = [md_stats([r[n][2] for r in done if n in r], len(done)) for n in ("tokens", "kv", "weights")]
    ok = sum(r["verdict"] == "ok" for r in judged)
    return (
        f"| {NAMES[engine]} | {split} | {logs} | {len(done)} | "
        + " | ".join(cells)
        + f" | {ok} / {len(judged)} |"
    )


def evaluate(engine: str, case: dict, version: str | None, rules) -> dict | None:
    d, why = ENGINES[engine]["build"](case, version)
    if d is None:
        return {"id": case["id"], "skipped": why}
    context_stated = d.max_context is not None
    r = resolve(d, Defaults())
    findings = check_deployment(case["id"], r, Settings(), rules)
    errors = {f.rule for f in findings if f.severity == Severity.ERROR}
    p = r.plan
    row: dict = {"id": case["id"], "model": d.model.value if d.model else "?", "errors": sorted(errors)}
    if p is not None:
        if engine == "vllm":
            kv = (p.stage_pools[0] if p.stage_pools else p.kv_pool) / GIB  # rank 0 logs its own pool
        elif engine in LLAMACPP_SERVERS:
            # the KV buffers it allocates (sliding-window layers at their own size), every GPU's together
            kv = (sum(p.stage_pools) if p.stage_pools else max(p.kv_pool, 0)) / GIB
        else:
            kv = p.kv_tokens * p.kv_per_token / GIB
        pred = {"weights": p.weights_per_gpu / GIB, "kv": kv, "tokens": float(p.kv_tokens)}
        pred["compute"] = p.term("compute buffer") / GIB
        pred["slots"] = float(p.state_slots)  # SGLang's mamba pool
        pred["free"] = (
            p.gpu_total - sum(t.bytes for t in p.terms)
        ) / GIB  # what a fraction of free is taken of
        real = logged(engine, case)
        by_gpu = (case.get("measured") or {}).get("kv_by_device_mib")
        if by_gpu and len(p.stage_pools) == len(by_gpu):  # llama.cpp: each GPU's own KV buffer
            row["kv_gpu"] = [
                (q / GIB, m / 1024, rel(q / GIB, m / 1024))
                for q, m in zip(p.stage_pools, by_gpu, strict=True)
            ]
        by_gpu = (case.get("measured") or {}).get("compute_by_device_mib")
        if by_gpu and len(p.stage_compute) == len(by_gpu):  # llama.cpp: each GPU's own compute buffer
            row["compute_gpu"] = [
                (q / GIB, m / 1024, rel(q / GIB, m / 1024))
                for q, m in zip(p.stage_compute, by_gpu, strict=True)
            ]
        failed_memory = case.get("failure_class") in LOGGED_REASON
        for name, value in real.items():
            if name == "kv" and case.get("outcome") == "failed" and not failed_memory:
                continue
            row[name] = (pred[name], value, rel(pred[name], value))
    reason = predicted_reason(engine, errors, p, context_stated)
    if case.get("outcome") == "started":
        row["verdict"] = "ok" if reason == STARTS else f"predicted '{reason}' for a case that started"
    elif case.get("failure_class") in LOGGED_REASON:
        want = LOGGED_REASON[case["failure_class"]]
        agree = want in (reason, SAME_REASON.get(reason))
        row["verdict"] = "ok" if agree else f"logged '{want}', predicted '{reason}'"
    else:
        row["verdict"] = (
            f"not scored: {case.get('failure_class') or case.get('outcome')} is not a verdict kvlint makes"
        )
    return row


def report(engine: str, split: str, cases: list[dict], rows: list[dict]) -> None:
    done = [r for r in rows if "skipped" not in r]
    print(f"{engine:<7} {split:<26} cases {len(cases):>3}  evaluated {len(done):>3}")
    for name, label in (
        ("tokens", "KV tokens"),
        ("kv", "KV GiB"),
        ("weights", "weights"),
        ("compute", "compute"),
        ("slots", "state slots"),
        ("free", "free"),
    ):
        if name in ("compute", "slots", "free") and not any(name in r for r in done):
            continue  # only llama.cpp logs a compute buffer, SGLang its mamba slots, TensorRT-LLM's engine path its free
        print(f"          {label:<10} {stats([r[name][2] for r in done if name in r])}")
    for key, label in (("kv_gpu", "KV per GPU"), ("compute_gpu", "compute/GPU")):
        per_gpu = [t[2] for r in done for t in r.get(key, [])]
        if per_gpu:  # only multi-GPU llama.cpp logs print a buffer per GPU
            print(f"          {label:<10} {stats(per_gpu)}")
    judged = [r for r in done if not r["verdict"].startswith("not scored")]
    ok = sum(r["verdict"] == "ok" for r in judged)
    print(f"          verdicts   {ok}/{len(judged)} agree" + (f" ({ok / len(judged):.0%})" if judged else ""))
    for r in rows:
        if "skipped" in r:
            print(f"            skipped {r['id']}: {r['skipped']}")
        elif r["verdict"] != "ok":
            print(f"            {r['id']}: {r['verdict']}")
        if "tokens" in r and abs(r["tokens"][2]) > OFF:
            pred, real, err = r["tokens"]
            print(f"            {r['id']}: KV tokens {pred:,.0f} vs {real:,.0f} logged ({err:+.1%})")


def print_cases(rows: list[dict]) -> None:
    for row in rows:
        if "skipped" in row:
            continue
        cells = []
        for name in ("weights", "kv", "tokens", "compute", "slots", "free"):
            v = row.get(name)
            if name in ("slots", "free") and not v:
                continue
            cells.append(f"{name} {v[0]:,.2f}/{v[1]:,.2f} {v[2]:+.1%}" if v else f"{name} -")
        print(f"  {row['id']:<6} {row['model'][:40]:<40} " + "  ".join(cells) + f"  {row['verdict']}")


def run_engine(engine: str, path: Path, args, rules, vllm_fit: set[str]) -> None:
    if not path.is_file():
        print(f"{engine:<7} no calibration file at {path} (skipped)")
        return
    data = load_yaml(path)
    spec = ENGINES[engine]
    if engine == "vllm" and (DATA / "vllm_case_facts.yaml").is_file():
        facts = load_yaml(DATA / "vllm_case_facts.yaml") or {}
        data[spec["key"]] = [with_facts(c, facts) for c in data.get(spec["key"]) or []]
    cases = [c for c in data.get(spec["key"]) or [] if c.get("scorable", True)]
    unscorable = [c for c in data.get(spec["key"]) or [] if not c.get("scorable", True)]
    if args.markdown:
        print_markdown(engine, cases, unscorable, rules, vllm_fit)
        return
    if unscorable:
        print(f"{engine:<7} {len(unscorable)} case(s) marked scorable: false are left out")
        for c in unscorable:
            why = " ".join(str(c.get("scorable_reason") or c.get("notes") or "no reason given").split())
            print(f"            {c['id']}: {why[:160]}")
    by_split: dict[str, list[dict]] = {}
    for case in cases:
        by_split.setdefault(NAMED if is_named(case) else split_of(engine, case, vllm_fit), []).append(case)
    for split in ("fit", "scored", NAMED):
        group = by_split.get(split, [])
        if split == NAMED and not group:
            continue
        rows = [evaluate(engine, c, spec["version"](c), rules) for c in group]
        report(engine, split, group, rows)
        if args.cases:
            print_cases(rows)
    plain = [c for c in cases if not is_named(c)]
    bare = [evaluate(engine, c, None, rules) for c in plain]
    report(engine, "all, no image tag", plain, bare)
    if args.cases:
        print_cases(bare)


def print_markdown(engine: str, cases: list[dict], unscorable: list[dict], rules, vllm_fit: set[str]) -> None:
    """The accuracy table's rows for one engine (docs/accuracy.md, checked by tests/test_docs.py)."""
    spec = ENGINES[engine]
    plain = [c for c in cases if not is_named(c)]
    for split in ("fit", "scored"):
        group = [c for c in plain if split_of(engine, c, vllm_fit) == split]
        left = sum(split_of(engine, c, vllm_fit) == split for c in unscorable)
        print(
            md_row(
                engine, split, group, [evaluate(engine, c, spec["version"](c), rules) for c in group], left
            )
        )
    named = [c for c in cases if is_named(c)]
    if named:
        rows = [evaluate(engine, c, spec["version"](c), rules) for c in named]
        print(md_row(engine, NAMED, named, rows, 0))
    bare = [evaluate(engine, c, None, rules) for c in plain]
    print(md_row(engine, "all, no image tag", plain, bare, 0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--vllm", type=Path, default=ROOT.parent / "shared" / "calibration" / "vllm_startup_logs.yaml"
    )
    ap.add_argument("--sglang", type=Path, default=DATA / "sglang_startup_logs.yaml")
    ap.add_argument("--tgi", type=Path, default=DATA / "tgi_startup_logs.yaml")
    ap.add_argument("--llamacpp", type=Path, default=DATA / "llamacpp_startup_logs.yaml")
    ap.add_argument("--ollama", type=Path, default=DATA / "ollama_startup_logs.yaml")
    ap.add_argument("--lmdeploy", type=Path, default=DATA / "lmdeploy_startup_logs.yaml")
    ap.add_argument("--trtllm", type=Path, default=DATA / "trtllm_startup_logs.yaml")
    ap.add_argument("--vllm-tpu", type=Path, default=DATA / "vllm_tpu_startup_logs.yaml")
    ap.add_argument("--cases", action="store_true", help="print every case")
    ap.add_argument("--markdown", action="store_true", help="print docs/accuracy.md's table instead")
    args = ap.parse_args()
    splits = load_yaml(DATA / "vllm_splits.yaml")
    vllm_fit = set(splits.get("fit_sources") or [])
    rules = all_rules()
    if args.markdown:
        print(HEADER)
    for engine in ("vllm", "sglang", "tgi", "llamacpp", "ollama", "lmdeploy", "trtllm", "vllm-tpu"):
        run_engine(engine, getattr(args, engine.replace("-", "_")), args, rules, vllm_fit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
