"""What kvlint reports on every file of ../shared/corpus/manifests and manifests2, held in
tests/data/corpus_findings.yaml: per file the serving workloads kvlint recognised (kind, name, engine,
model, GPU, GPU count, whether a capacity plan was made) and its findings (code, line, severity), each
error- and warning-level finding with a hand-checked `why` (why the finding is right about that file).

tests/test_corpus.py holds kvlint to the table. When a change alters a file's findings, rewrite the
machine part and re-check what it flags:

    python tests/corpus_expect.py                   # list the files whose output differs from the table
    python tests/corpus_expect.py --update FILE...  # rewrite those entries (FILE: name, key or path)
    python tests/corpus_expect.py --update --all    # rewrite every entry

`--update` keeps every hand-written `why` whose finding is still there (same code, severity and line;
a finding that moved keeps its note), and adds `recheck:` to an entry whose warnings/errors appeared,
disappeared or moved, or whose workloads stopped being recognised or lost their plan. Read the file,
write or correct the `why` notes, then delete the `recheck:` lines: the test fails while any remains,
and while a warning or error has no `why`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KVLINT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
FOLDERS = ("manifests", "manifests2")
TABLE = ROOT / "tests" / "data" / "corpus_findings.yaml"
CHECKED = ("error", "warning")  # severities that need a hand-checked `why`
WORKLOAD_KEYS = ("line", "kind", "name", "engine", "model", "gpu", "gpus", "plan")
FINDING_KEYS = ("code", "line", "severity", "why")

HEADER = """\
# kvlint's output on every file of ../shared/corpus/manifests and manifests2, hand-checked.
# Written by `python tests/corpus_expect.py --update FILE` (see its docstring); `why` notes are by hand.
# workloads: line of the object, kind/name, engine, model as kvlint read it (the file's id, or the base
#   model a table maps a tag to, e.g. an Ollama tag), GPU as kvlint resolved it (null: not stated or not
#   known), GPUs per replica, plan: whether a capacity plan was made.
# findings: code, line, severity; `why` (errors and warnings): what in the file makes the finding right.
# recheck: findings or workloads changed since the last hand check; re-read the file, fix the notes,
#   delete the recheck line (tests/test_corpus.py fails while one remains).
"""


def corpus_files() -> list[str]:
    """Every corpus file as 'folder/name' (INDEX.yaml describes the folder; it is not a corpus file)."""
    out = []
    for folder in FOLDERS:
        base = CORPUS / folder
        if base.is_dir():
            out += [
                f"{folder}/{p.name}" for p in sorted(base.iterdir()) if p.is_file() and p.name != "INDEX.yaml"
            ]
    return out


def run_kvlint(keys: list[str]) -> dict:
    """kvlint's JSON report over the files, run as a user runs it (one run, both folders, no config)."""
    cmd = [sys.executable, "-m", "kvlint", "--isolated", "--exit-zero", "--format", "json", *keys]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's kvlint, whichever Python runs this
    done = subprocess.run(cmd, cwd=CORPUS, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"kvlint exited {done.returncode}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def observe(keys: list[str] | None = None) -> dict[str, dict]:
    """The machine part of the table, as kvlint reports it today."""
    keys = corpus_files() if keys is None else keys
    report = run_kvlint(keys)
    out: dict[str, dict] = {k: {"workloads": [], "findings": []} for k in keys}
    for d in report["deployments"]:
        w = {k: d.get(k) for k in WORKLOAD_KEYS}
        w["plan"] = d.get("plan") is not None
        out[_key(d["file"])]["workloads"].append(w)
    for f in report["findings"]:
        entry = {"code": f["rule"], "line": f["line"], "severity": f["severity"]}
        if entry not in out[_key(f["file"])]["findings"]:  # one line per (code, line, severity)
            out[_key(f["file"])]["findings"].append(entry)
    for v in out.values():
        v["findings"].sort(key=lambda x: (x["line"], x["code"], x["severity"]))
    return out


def _key(path: str) -> str:
    parts = Path(path).parts
    return "/".join(parts[-2:])


def load_table(path: Path = TABLE) -> dict[str, dict]:
    if not path.is_file():
        return {}
    sys.path.insert(0, str(ROOT))
    from kvlint.load import load_bytes
    from kvlint.load.tree import to_plain

    loaded = load_bytes(path.read_bytes(), str(path), max_bytes=16 * 1024 * 1024)
    if loaded.issues:
        raise ValueError(f"{path}: {loaded.issues}")
    files = to_plain(loaded.documents[0].root, [10_000_000])["files"] or {}
    for entry in files.values():
        entry.setdefault("workloads", [])
        entry.setdefault("findings", [])
        entry["workloads"] = entry["workloads"] or []
        entry["findings"] = entry["findings"] or []
    return files


def machine(entry: dict) -> dict:
    """An entry without the hand-written parts, for comparing with what kvlint reports."""
    return {
        "workloads": [{k: w.get(k) for k in WORKLOAD_KEYS} for w in entry.get("workloads") or []],
        "findings": [{k: f.get(k) for k in FINDING_KEYS[:3]} for f in entry.get("findings") or []],
    }


def merge(old: dict | None, new: dict) -> dict:
    """The new machine part with the old `why` notes carried over; `recheck` says what changed."""
    old = old or {"workloads": [], "findings": []}
    notes: list[str] = list(old.get("recheck") or [])
    pool = [dict(f) for f in old.get("findings") or []]
    findings = []
    for f in new["findings"]:
        same = _take(
            pool,
            lambda o, f=f: (o["code"], o["severity"], o["line"]) == (f["code"], f["severity"], f["line"]),
        )
        moved = same or _take(pool, lambda o, f=f: (o["code"], o["severity"]) == (f["code"], f["severity"]))
        why = (moved or {}).get("why") or ""
        if f["severity"] in CHECKED and same is None:
            was = f" (was line {moved['line']})" if moved else ""
            notes.append(f"new {f['severity']} {f['code']} line {f['line']}{was}")
        findings.append({**f, "why": why} if f["severity"] in CHECKED or why else dict(f))
    for o in pool:
        if o["severity"] in CHECKED:
            notes.append(f"gone: {o['severity']} {o['code']} line {o['line']}")
    notes += _workload_changes(old.get("workloads") or [], new["workloads"])
    out: dict = {"workloads": new["workloads"], "findings": findings}
    if notes:
        out["recheck"] = sorted(set(notes))
    return out


def _take(pool: list[dict], match):
    for i, o in enumerate(pool):
        if match(o):
            return pool.pop(i)
    return None


def _workload_changes(old: list[dict], new: list[dict]) -> list[str]:
    def ident(w):
        return (w.get("kind"), w.get("name"), w.get("engine"), w.get("model"))

    now = {ident(w): w for w in new}
    notes = []
    for w in old:
        got = now.get(ident(w))
        label = f"{w.get('kind')}/{w.get('name')} ({w.get('engine')}, {w.get('model')})"
        if got is None:
            notes.append(f"workload no longer recognised as before: {label}")
        elif w.get("plan") and not got.get("plan"):
            notes.append(f"workload lost its capacity plan: {label}")
    return notes


def dump(files: dict[str, dict]) -> str:
    lines = [HEADER.rstrip("\n"), "files:"]
    for key in sorted(files):
        entry = files[key]
        lines.append(f"  {_s(key)}:")
        for part, keys in (("workloads", WORKLOAD_KEYS), ("findings", FINDING_KEYS)):
            items = entry.get(part) or []
            if not items:
                lines.append(f"    {part}: []")
                continue
            lines.append(f"    {part}:")
            for item in items:
                cells = ", ".join(f"{k}: {_s(item[k])}" for k in keys if k in item)
                lines.append(f"    - {{{cells}}}")
        if entry.get("recheck"):
            lines.append("    recheck:")
            lines += [f"    - {_s(n)}" for n in entry["recheck"]]
    return "\n".join(lines) + "\n"


def _s(v) -> str:
    """A YAML scalar: JSON's spelling (a subset of YAML) for anything that is not a plain word."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    s = str(v)
    plain = s and all(c.isalnum() or c in "-_./" for c in s) and not s[0].isdigit()
    if plain and s.lower() not in ("null", "true", "false", "yes", "no", "on", "off", "y", "n", "~"):
        return s
    return json.dumps(s, ensure_ascii=False)


def differences(table: dict[str, dict], seen: dict[str, dict]) -> list[str]:
    out = []
    for key in sorted(set(table) | set(seen)):
        if key not in seen:
            out.append(f"{key}: in the table but not a corpus file")
        elif key not in table:
            out.append(f"{key}: not in the table")
        elif machine(table[key]) != machine(seen[key]):
            out.append(f"{key}: kvlint's output differs from the table")
    return out


def _select(args: list[str], keys: list[str]) -> list[str]:
    chosen = []
    for a in args:
        name = Path(a).name
        hits = [k for k in keys if k == a or k.endswith("/" + name) or k == "/".join(Path(a).parts[-2:])]
        if not hits:
            raise SystemExit(f"corpus_expect: {a}: not a corpus file")
        chosen += hits
    return chosen


def main(argv: list[str]) -> int:
    table, seen = load_table(), observe()
    if not argv:
        diffs = differences(table, seen)
        print("\n".join(diffs) or "the table matches kvlint's output on every corpus file")
        return 1 if diffs else 0
    if argv[0] != "--update":
        print(__doc__)
        return 2
    chosen = list(seen) if argv[1:] == ["--all"] else _select(argv[1:], list(seen))
    for key in chosen:
        table[key] = merge(table.get(key), seen[key])
    for key in [k for k in table if k not in seen]:
        del table[key]
    TABLE.write_text(dump(table), encoding="utf-8")
    flagged = [k for k in chosen if table[k].get("recheck")]
    print(f"rewrote {len(chosen)} entries; to re-check by hand ({len(flagged)}):")
    for k in flagged:
        print(f"  {k}: " + "; ".join(table[k]["recheck"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
