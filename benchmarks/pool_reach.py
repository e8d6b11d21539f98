"""Issue 25's reach figure: on real repositories that keep workloads and node definitions together,
how many serving workloads kvlint plans on the GPU their node pool gives.

    python benchmarks/pool_reach.py DIR [DIR ...]          # markdown table, one row per folder
    python benchmarks/pool_reach.py --json DIR [DIR ...]   # the same, with each workload's outcome

Each DIR is one repository's checked-out tree (a `.git` entry at its top marks the repository root,
as kvlint's pool search expects: link/pools.py root_of). kvlint runs over it as a user runs it (no
configuration, `--isolated`), in process so the record says where each workload's GPU came from.

A serving workload is what benchmarks/corpus_figures.py counts as "workloads recognised": every
deployment kvlint's report lists. Its outcome is one of
- `pool`: planned, the GPU inferred from the node pools it can land on (link/pools.py attach);
- `stated`: planned on a GPU the workload states (node label, instance type, resource name, ...);
- `candidates`: several pool GPUs, checked on each (a fleet);
- `not planned: <why>`: no plan, with the first reason the findings give (the KV004 / KV002 / KV003
  message of that workload, shortened), or what the record says (`pools_without_gpu`, no pool met);
  those of them the pools gave a GPU anyway (`gpu_from_pools`: another reason holds the plan back,
  a model kvlint does not know) are listed after the table.

The second table is the done-when's own measure: of the workloads kvlint could plan if it knew the
GPU, those whose repository defines node pools, how many took a GPU from them.
- `plannable`: planned, or not planned only for want of a GPU: the model read (a model id on the
  record), no KV004 / KV003 finding on the workload, and its first reason is KV002 (GPU not stated,
  no GPU-carrying pool it lands on) or the record's `pools_without_gpu`;
- `in scope`: of those, the ones with a node-pool definition where kvlint looks for one (the
  linted file's own documents, or the repository's walk: link/pools.py pools_for), matched or not;
- of those: `pool` (one GPU type), `candidates` (several, checked on each), `stated` (the workload
  names its GPU, so the pools are not needed), `missed` (no GPU taken from the pools);
- `reach` = (pool + candidates) / (in scope - stated): how often a workload that needs its pool's
  GPU gets it. The misses are listed with their reason and the pools in scope.

The repositories measured (snapshots of their default branch, read with git; file list limited to
YAML / Terraform / JSON / templates / shell) are in REPOSITORIES below with the commit of each.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (owner/name, commit) of the trees measured for issue 25's note
REPOSITORIES = (
    ("CyrusTC/aws-eks-llm-perf-test", "495597736088138539f5e1aea9b6298965dc083a"),
    ("GoogleCloudPlatform/ai-on-gke", "8676d66db221fcfae74b3cf2869695a7752c4f43"),
    ("NVIDIA/nim-deploy", "3c6bcbd05f0c70612d2ed96112248e623035ed05"),
    ("awslabs/ai-on-eks", "41a979ee7614a59e5337768b1bddec76ad6653e0"),
    ("awslabs/data-on-eks", "a546a1905d017a93a11fb44d17d08d286f7bfb44"),
    ("bhajian/redhat", "c23f3c48189c3b4974408de72ae462a34edea1ee"),
    ("dandawg/openshift-infra", "63df2452acc3d6725a8c2897709dd6aafc81d339"),
    ("llm-d/llm-d-infra", "21caa3f912d796aab9c30ac4017051183458b1a2"),
    ("rh-aiservices-bu/llm-on-openshift", "2b63898660f1ac651003e73a8ffe2a06b3d611f7"),
    ("walidshaari/sample-aws-eks-auto-mode", "8ebbbeb3a721a0fe73e5ebf3032876a47c7361a3"),
    # added for the second measurement (GPU node definitions beside serving workloads)
    ("GoogleCloudPlatform/accelerated-platforms", "9320f3b27aa0998e9607829ad6e9695d3514a8ef"),
    ("adnan-drina/rhoai3-demo", "a12daf1cbab64731a41dfc484467d0c445f96f91"),
    ("jinzishuai/jark-demo", "64cab4fb469f1c0a20ca5d66fb53e99caed81816"),
    ("pakolee867/vllm-production-stack-terraform", "46898b693f16f70885aaa3d9689f2c6ebc5c9740"),
    ("redhat-ai-services/ai-accelerator", "f241ba28f3597eab06d13c2eeada2160a5e99a5e"),
    ("vllm-project/production-stack", "a6c01db05f65f556235413ba8dbcfb0c01132fff"),
)
REASON_RULES = ("KV004", "KV002", "KV003")


def _settings():
    from kvlint.run.flags import build_settings

    settings, error = build_settings({"isolated": True})
    if settings is None:
        raise SystemExit(f"kvlint settings: {error}")
    return settings


def lint(folder: str):
    from kvlint.app import _displayed
    from kvlint.run.discover import discover
    from kvlint.run.workers import lint_files

    settings = _settings()
    found = discover([folder], settings.exclude, settings.respect_gitignore)
    return [r for r in lint_files(_displayed(found.files), settings, 1, True) if not isinstance(r, str)]


def _short(message: str) -> str:
    text = re.sub(r"^[A-Za-z]+/[^:]+: ", "", message)  # "Deployment/x: " said by the row already
    text = re.sub(r"\d[\d,.]*", "N", text)
    return text[:90]


def outcome(r, findings) -> str:
    d = r.deployment
    if r.plan is not None:
        if (
            d.gpu is not None
            and d.node_pools is not None
            and d.gpu.origin == "inferred"
            and "node pool" in (d.gpu.note or "")
        ):
            return "pool"
        if d.gpu_candidates is not None and d.node_pools is not None:
            return "candidates"
        return "stated"
    if d.gpu_candidates is not None and d.node_pools is not None:
        return "candidates"
    if d.extra.get("pools_without_gpu") is not None:
        return "not planned: only pools whose node types carry no GPU"
    mine = [f for f in findings if f.deployment == f"{d.kind}/{d.name}" and f.rule in REASON_RULES]
    if mine:
        return f"not planned: {mine[0].rule} {_short(mine[0].message)}"
    return "not planned: no reason given"


def plannable(r, findings) -> bool:
    """Planned, or held back only by the GPU (see the module docstring)."""
    if r.plan is not None:
        return True
    d = r.deployment
    mine = [f for f in findings if f.deployment == f"{d.kind}/{d.name}" and f.rule in REASON_RULES]
    if d.model is None or not d.model.value or any(f.rule in ("KV004", "KV003") for f in mine):
        return False
    return d.extra.get("pools_without_gpu") is not None or bool(mine and mine[0].rule == "KV002")


def pools_in_scope(file: str) -> list[str]:
    """The node-pool definitions kvlint's search reaches from the workload's file, matched or not."""
    from kvlint.link import pools
    from kvlint.load import load_bytes

    real = os.path.abspath(file)  # the file as kvlint shows it: relative to the working directory
    docs = []
    if real.endswith((".yaml", ".yml")):
        with open(real, "rb") as fh:
            docs = load_bytes(fh.read(), real, pools.FILE_MAX).documents
    levels = pools.pools_for(real, real, docs)
    return sorted({p.label() for level in levels for p in level})


def measure(folder: str) -> dict:
    rows = []
    for result in lint(folder):
        for r in result.deployments:
            d = r.deployment
            ok = plannable(r, result.findings)
            rows.append(
                {
                    "file": os.path.relpath(d.file, folder),
                    "line": d.where.line,
                    "workload": f"{d.kind}/{d.name}",
                    "gpu": r.gpu.id if r.gpu else None,
                    "pools": [p.label() for p in d.node_pools.value] if d.node_pools is not None else [],
                    "outcome": outcome(r, result.findings),
                    "plannable": ok,
                    "gpu_from_pools": d.node_pools is not None
                    and (d.gpu is not None or d.gpu_candidates is not None),
                    "pools_in_scope": pools_in_scope(d.file) if ok else [],
                }
            )
    counts = Counter("not planned" if o["outcome"].startswith("not") else o["outcome"] for o in rows)
    return {"folder": folder, "workloads": len(rows), "counts": dict(counts), "rows": rows}


def main(argv: list[str]) -> int:
    as_json = argv[:1] == ["--json"]
    folders = argv[1:] if as_json else argv
    if not folders:
        print(__doc__)
        return 2
    results = [measure(f) for f in folders]
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    cols = ("pool", "stated", "candidates", "not planned")
    print("| repository | serving workloads | " + " | ".join(cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))
    total = Counter()
    for res in results:
        total.update(res["counts"])
        total["workloads"] += res["workloads"]
        cells = " | ".join(str(res["counts"].get(c, 0)) for c in cols)
        print(f"| {os.path.basename(res['folder'].rstrip('/'))} | {res['workloads']} | {cells} |")
    print(f"| all | {total['workloads']} | " + " | ".join(str(total.get(c, 0)) for c in cols) + " |")
    why = Counter(o["outcome"] for res in results for o in res["rows"] if o["outcome"].startswith("not"))
    print("\nNot planned, by reason:\n")
    for reason, n in why.most_common():
        print(f"- {n} x {reason.removeprefix('not planned: ')}")
    held = [
        (os.path.basename(res["folder"].rstrip("/")), o)
        for res in results
        for o in res["rows"]
        if o["outcome"].startswith("not") and o["gpu_from_pools"]
    ]
    print(f"\nOf those, given a GPU by their pools but held back by another reason: {len(held)}")
    for repo, o in held:
        print(
            f"- {repo} {o['file']}:{o['line']} {o['workload']}: {o['outcome'].removeprefix('not planned: ')}"
        )
    print_reach(results)
    return 0


def _bucket(row: dict) -> str:
    return row["outcome"] if row["outcome"] in ("pool", "candidates", "stated") else "missed"


def print_reach(results: list[dict]) -> None:
    """The second table: reach among plannable workloads with node pools in scope (module docstring)."""
    cols = ("pool", "candidates", "stated", "missed")
    print("\nPlannable workloads (engine and model read) whose repository defines node pools:\n")
    print("| repository | plannable | in scope | " + " | ".join(cols) + " | reach |")
    print("|---|---:|---:|" + "---:|" * len(cols) + "---:|")
    total: Counter = Counter()
    misses = []
    for res in results:
        ok = [o for o in res["rows"] if o["plannable"]]
        scoped = [o for o in ok if o["pools_in_scope"]]
        n = Counter(_bucket(o) for o in scoped)
        n.update(plannable=len(ok), scope=len(scoped))
        total.update(n)
        misses += [(res["folder"], o) for o in scoped if _bucket(o) == "missed"]
        if ok:
            print(_reach_row(os.path.basename(res["folder"].rstrip("/")), n, cols))
    print(_reach_row("all", total, cols))
    print("\nMissed (in scope, no GPU from the pools):\n")
    for folder, o in misses:
        print(f"- {os.path.basename(folder)} {o['file']}:{o['line']} {o['workload']}: {o['outcome']}")


def _reach_row(name: str, n: Counter, cols: tuple[str, ...]) -> str:
    need = n["scope"] - n["stated"]
    reach = f"{(n['pool'] + n['candidates']) / need:.0%}" if need else "-"
    cells = " | ".join(str(n.get(c, 0)) for c in cols)
    return f"| {name} | {n['plannable']} | {n['scope']} | {cells} | {reach} |"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
