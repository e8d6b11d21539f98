"""The ecosystem check, as ruff runs one: what a change does to the findings on real files.

    python benchmarks/ecosystem.py --base REV [--json] [--fail-on-change] [PATH ...]

Lints the same inputs twice, with kvlint as it was at REV (the commit's tracked files, unpacked
into a temporary directory and imported from there) and with the working tree's kvlint, and prints
the findings added, removed and changed, grouped by rule and then by file, plus the deployments
whose capacity plan moved. The inputs are PATHs when given; else the working tree's fixtures/ and
the two real corpus folders (../shared/corpus/manifests and manifests2, or $KVLINT_SHARED/corpus/),
when present. Both runs use --isolated, so no repository configuration is read.

A report, not a gate: the exit code is 0 whatever changed (`.ci/run` prints it for every
submission), 1 with --fail-on-change when anything did, 2 when a run could not be made.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Runs kvlint from the package directory given first, ahead of the installed (editable) one: with
# -c, sys.path[0] is the working directory, which holds the working tree's kvlint.
RUNNER = (
    "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'kvlint'; "
    "runpy.run_module('kvlint', run_name='__main__', alter_sys=True)"
)
PLAN_KEYS = (
    "weights_bytes_per_gpu",
    "kv_cache_bytes_per_gpu",
    "kv_cache_tokens",
    "max_concurrency",
    "max_len_that_fits",
)


def default_paths() -> list[str]:
    shared = Path(os.environ.get("KVLINT_SHARED", ROOT.parent / "shared"))
    paths = [ROOT / "fixtures", shared / "corpus" / "manifests", shared / "corpus" / "manifests2"]
    return [os.path.relpath(p, ROOT) for p in paths if p.is_dir()]


def unpack(rev: str, into: Path) -> Path:
    """The package as committed at `rev` (tracked files only), under `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "kvlint"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def lint(package_parent: Path, paths: list[str]) -> dict:
    cmd = [sys.executable, "-c", RUNNER, str(package_parent), "--isolated", "--exit-zero", "--format", "json"]
    done = subprocess.run([*cmd, *paths], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(
            f"kvlint from {package_parent} exited {done.returncode}: {done.stderr.strip()[-2000:]}"
        )
    return json.loads(done.stdout)


def _key(f: dict) -> tuple:
    return (f["file"], f["rule"], f["line"], f["column"])


def _body(f: dict) -> tuple:
    return (f["severity"], f["message"], tuple(f.get("details") or ()), f.get("fix"))


def _plans(report: dict) -> dict[tuple, dict]:
    out = {}
    for d in report.get("deployments", []):
        plan = d.get("plan") or {}
        out[(d["file"], d["line"], d.get("name"))] = {k: plan.get(k) for k in PLAN_KEYS if k in plan}
    return out


def compare(before: dict, after: dict) -> dict:
    old = defaultdict(list)
    new = defaultdict(list)
    for f in before["findings"]:
        old[_key(f)].append(f)
    for f in after["findings"]:
        new[_key(f)].append(f)
    added, removed, changed = [], [], []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key, []), new.get(key, [])
        same = Counter(_body(f) for f in a) & Counter(_body(f) for f in b)
        gone = [f for f in a if not _take(same, f)]
        same = Counter(_body(f) for f in a) & Counter(_body(f) for f in b)
        came = [f for f in b if not _take(same, f)]
        pairs = min(len(gone), len(came))
        changed += [{"before": x, "after": y} for x, y in zip(gone[:pairs], came[:pairs], strict=True)]
        removed += gone[pairs:]
        added += came[pairs:]
    p_old, p_new = _plans(before), _plans(after)
    plans = [
        {"deployment": list(k), "before": p_old.get(k), "after": p_new.get(k)}
        for k in sorted(set(p_old) | set(p_new), key=str)
        if p_old.get(k) != p_new.get(k)
    ]
    return {"added": added, "removed": removed, "changed": changed, "plans": plans}


def _take(pool: Counter, f: dict) -> bool:
    body = _body(f)
    if pool[body] > 0:
        pool[body] -= 1
        return True
    return False


def render(diff: dict, base: str, files: int) -> str:
    lines = [f"ecosystem check against {base}: {files} files linted by both"]
    by_rule: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for what, sign in (("added", "+"), ("removed", "-")):
        for f in diff[what]:
            by_rule[f["rule"]][f["file"]].append(
                f"{sign} {f['line']}:{f['column']} {f['severity']}: {f['message']}"
            )
    for pair in diff["changed"]:
        a, b = pair["before"], pair["after"]
        by_rule[b["rule"]][b["file"]].append(_changed(a, b))
    if not by_rule and not diff["plans"]:
        lines.append("no finding and no plan changed")
        return "\n".join(lines)
    for rule in sorted(by_rule):
        files_of = by_rule[rule]
        counts = Counter(line[0] for entries in files_of.values() for line in entries)
        lines.append(f"{rule}: +{counts['+']} -{counts['-']} ~{counts['~']}")
        for file in sorted(files_of):
            lines.append(f"  {file}")
            lines += [f"    {entry}" for entry in files_of[file]]
    if diff["plans"]:
        lines.append(f"plans moved: {len(diff['plans'])}")
        for p in diff["plans"]:
            file, line, name = p["deployment"]
            lines.append(f"  {file}:{line} {name}: {p['before']} -> {p['after']}")
    return "\n".join(lines)


def _changed(a: dict, b: dict) -> str:
    head = f"~ {b['line']}:{b['column']} {a['severity']} -> {b['severity']}: {b['message']}"
    out = [head if a["message"] == b["message"] else f"{head}\n      was: {a['message']}"]
    old, new = list(a.get("details") or ()), list(b.get("details") or ())
    if old != new:
        at = next(
            (i for i, (x, y) in enumerate(zip(old, new, strict=False)) if x != y), min(len(old), len(new))
        )
        out.append(f"      details from line {at + 1}: {old[at : at + 1]} -> {new[at : at + 1]}")
    if a.get("fix") != b.get("fix"):
        out.append(f"      fix: {a.get('fix')} -> {b.get('fix')}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare against (e.g. main, HEAD~3)")
    parser.add_argument("--json", action="store_true", help="print the differences as JSON")
    parser.add_argument("--fail-on-change", action="store_true", help="exit 1 when anything changed")
    parser.add_argument("paths", nargs="*", help="inputs (default: fixtures/ and the two corpus folders)")
    args = parser.parse_args(argv)
    paths = args.paths or default_paths()
    try:
        with tempfile.TemporaryDirectory(prefix="kvlint-ecosystem-") as tmp:
            before = lint(unpack(args.base, Path(tmp)), paths)
        after = lint(ROOT, paths)
    except (subprocess.CalledProcessError, RuntimeError, ValueError) as exc:
        detail = (
            exc.stderr.decode(errors="replace") if isinstance(exc, subprocess.CalledProcessError) else exc
        )
        print(f"ecosystem: cannot compare with {args.base}: {detail}", file=sys.stderr)
        return 2
    diff = compare(before, after)
    files = len({f["file"] for f in after["findings"]} | {d["file"] for d in after.get("deployments", [])})
    try:
        print(json.dumps(diff, indent=1) if args.json else render(diff, args.base, files))
    except BrokenPipeError:  # a pager or `head` closed the pipe
        sys.stderr.close()
    moved = any(diff[k] for k in ("added", "removed", "changed", "plans"))
    return 1 if args.fail_on_change and moved else 0


if __name__ == "__main__":
    sys.exit(main())
