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
  message of that workload, shortened), or what the record says (`pools_without_gpu`, no pool met).

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


def measure(folder: str) -> dict:
    rows = []
    for result in lint(folder):
        for r in result.deployments:
            d = r.deployment
            rows.append(
                {
                    "file": os.path.relpath(d.file, folder) if os.path.isabs(d.file) else d.file,
                    "line": d.where.line,
                    "workload": f"{d.kind}/{d.name}",
                    "gpu": r.gpu.id if r.gpu else None,
                    "pools": [p.label() for p in d.node_pools.value] if d.node_pools is not None else [],
                    "outcome": outcome(r, result.findings),
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
