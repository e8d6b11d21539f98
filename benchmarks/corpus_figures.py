"""The corpus figures for issue 12's closing note, reproducibly: kvlint run as a user runs it over
../shared/corpus/manifests and manifests2 (one run, no configuration), counted per folder, and every
error-level finding with the hand-checked reason it is right (tests/data/corpus_findings.yaml).

    python benchmarks/corpus_figures.py            # markdown table + the errors
    python benchmarks/corpus_figures.py --json     # the same figures as JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("KVLINT_SHARED", ROOT.parent / "shared")) / "corpus"
FOLDERS = ("manifests", "manifests2")
TABLE = ROOT / "tests" / "data" / "corpus_findings.yaml"
sys.path.insert(0, str(ROOT))
from kvlint import engines  # noqa: E402

MODELLED = engines.names()  # engines whose memory kvlint models: the registry's
# KV004s of link/unread.py: a GPU container, accelerator request, engine command or GPU VM type in a
# document that gave no workload
UNREAD = (
    "in a layout kvlint does not read as a serving workload",
    "runs nothing kvlint reads as an LLM engine",
)


def files(folder: str) -> list[str]:
    base = CORPUS / folder
    return [f"{folder}/{p.name}" for p in sorted(base.iterdir()) if p.is_file() and p.name != "INDEX.yaml"]


def run(keys: list[str]) -> dict:
    cmd = [sys.executable, "-m", "kvlint", "--isolated", "--exit-zero", "--format", "json", *keys]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, cwd=CORPUS, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def key(path: str) -> str:
    return "/".join(Path(path).parts[-2:])


def figures(report: dict, keys: list[str]) -> dict:
    mine = set(keys)
    deps = [d for d in report["deployments"] if key(d["file"]) in mine]
    finds = [f for f in report["findings"] if key(f["file"]) in mine]
    kv004_by = {(key(f["file"]), f.get("deployment")) for f in finds if f["rule"] == "KV004"}
    not_checkable = [d for d in deps if (key(d["file"]), f"{d['kind']}/{d['name']}") in kv004_by]
    with_findings = {key(f["file"]) for f in finds}
    with_workload = {key(d["file"]) for d in deps}
    sev = Counter(f["severity"] for f in finds)
    return {
        "files": len(keys),
        "files with a recognised workload": len(with_workload),
        "workloads recognised": len(deps),
        f"on an engine kvlint models ({'/'.join(map(engines.display, MODELLED))})": sum(
            d["engine"] in MODELLED for d in deps
        ),
        "checked with a capacity plan": sum(d["plan"] is not None for d in deps),
        "no GPU stated, fit verdict on the usual cloud GPUs (KV002 info)": sum(
            f["rule"] == "KV002" and f["severity"] == "info" and " fits on " in f["message"] for f in finds
        ),
        "workloads reported not checkable (KV004)": len(not_checkable),
        "unread layouts reported (KV004, no workload)": sum(
            f["rule"] == "KV004" and any(u in f["message"] for u in UNREAD) for f in finds
        ),
        "KV004 findings": sum(f["rule"] == "KV004" for f in finds),
        "KV005 findings": sum(f["rule"] == "KV005" for f in finds),
        "findings": len(finds),
        "errors": sev["error"],
        "warnings": sev["warning"],
        "infos": sev["info"],
        "files with no finding": len(mine - with_findings),
        "files with no finding but a workload": len(with_workload - with_findings),
    }


def reasons() -> dict[tuple[str, str, int], str]:
    if not TABLE.is_file():
        return {}
    sys.path.insert(0, str(ROOT / "tests"))
    import corpus_expect

    out = {}
    for k, entry in corpus_expect.load_table(TABLE).items():
        for f in entry["findings"]:
            out[(k, f["code"], f["line"])] = f.get("why") or ""
    return out


def main(argv: list[str]) -> int:
    per = {folder: files(folder) for folder in FOLDERS}
    every = [k for keys in per.values() for k in keys]
    report = run(every)
    table = {folder: figures(report, keys) for folder, keys in per.items()}
    table["both"] = figures(report, every)
    why = reasons()
    errors = [
        {
            "file": key(f["file"]),
            "line": f["line"],
            "code": f["rule"],
            "message": f["message"],
            "why": why.get((key(f["file"]), f["rule"], f["line"]), "(no hand-checked note)"),
        }
        for f in report["findings"]
        if f["severity"] == "error"
    ]
    if argv[:1] == ["--json"]:
        print(json.dumps({"figures": table, "errors": errors}, indent=2))
        return 0
    cols = [*FOLDERS, "both"]
    print("| figure | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for name in table["both"]:
        print(f"| {name} | " + " | ".join(str(table[c][name]) for c in cols) + " |")
    print(f"\nError-level findings ({len(errors)}), each with the reason it is right:\n")
    for e in errors:
        print(f"- `{e['file']}:{e['line']}` {e['code']}: {e['message'][:160]}\n  - why: {e['why']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
