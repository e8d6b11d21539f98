"""Speed of kvlint against yamllint and a bare ruamel.yaml parse (a script, not a test).

    python benchmarks/speed.py [--corpus ../shared/corpus/manifests] [--runs 15] [--scale 100,1000,10000]

Every timing is a fresh process, as pre-commit and CI start one. Measured:

(a) one typical corpus file, as a pre-commit hook runs it: `kvlint FILE` (no configuration, and
    with a `.kvlint.yaml` beside it) against `yamllint FILE`, interleaved, median of --runs;
(b) the whole corpus and the corpus replicated to ~1,000 documents: `kvlint DIR` against
    `yamllint DIR`, and against the floor (c): a process that imports ruamel.yaml and
    round-trip-parses the same files (YAML(typ="rt").load_all), which any ruamel-based linter
    must at least do; the C-backed safe parse kvlint uses is shown too;
(d) scale: 100, 1,000 and 10,000 documents — wall time, time per document and peak memory
    (max RSS of the process), serial and with --jobs.

kvlint's bytecode is compiled first (pip does this on install; an editable checkout run with
PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module on every start).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"

FLOOR = """
import sys
from ruamel.yaml import YAML
y = YAML(typ=sys.argv[1], pure=False)
docs = 0
for path in sys.argv[2:]:
    with open(path, "rb") as fh:
        text = fh.read().decode("utf-8", "replace")
    try:
        docs += sum(1 for _ in (y.load_all(text) if sys.argv[1] == "rt" else y.compose_all(text)))
    except Exception:
        pass
print(docs)
"""


# A small launcher times the command and reads its peak memory: a child forked straight from this
# process would inherit this process's resident pages into its own high-water mark.
LAUNCH = """
import os, resource, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        os.execv(cmd[0], cmd)
    finally:
        os._exit(127)
_, status = os.waitpid(pid, 0)
wall = time.perf_counter() - start
with open(out, "w") as fh:
    fh.write(f"{wall} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """(wall seconds, peak RSS in KiB of the largest process) of one fresh process."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as result:
        subprocess.run([sys.executable, "-S", "-c", LAUNCH, result.name, *cmd], cwd=cwd, env=env, check=True)
        wall, peak, code = result.read().split()
    if int(code) not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])}… exited {code}")
    return float(wall), int(peak)


def median_of(cmds: dict, cwd: Path, env, runs: int) -> dict[str, tuple[float, int]]:
    """Interleaved runs (a, b, a, b, …) so drift in machine load hits every command alike. A
    command is a list, or a (list, directory) pair to run it somewhere other than `cwd`."""
    samples: dict[str, list[float]] = {k: [] for k in cmds}
    rss: dict[str, int] = dict.fromkeys(cmds, 0)
    for _ in range(runs):
        for name, cmd in cmds.items():
            argv, where = cmd if isinstance(cmd, tuple) else (cmd, cwd)
            wall, peak = run(argv, where, env)
            samples[name].append(wall)
            rss[name] = max(rss[name], peak)
    return {k: (statistics.median(v), rss[k]) for k, v in samples.items()}


def tool(name: str) -> list[str] | None:
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return [str(beside)]
    found = shutil.which(name)
    return [found] if found else None


def count_documents(path: Path) -> int:
    from kvlint.load import load_bytes

    return max(1, sum(1 for d in load_bytes(path.read_bytes(), str(path), 1 << 30).documents if d.root))


def replicate(files: list[tuple[Path, int]], target_docs: int, into: Path) -> tuple[int, int]:
    """Copy the corpus round-robin into `into` until it holds at least target_docs documents."""
    into.mkdir(parents=True)
    docs = n = 0
    while docs < target_docs:
        src, count = files[n % len(files)]
        sub = into / f"copy{n // len(files):03d}"
        sub.mkdir(exist_ok=True)
        shutil.copyfile(src, sub / src.name)
        docs += count
        n += 1
    return n, docs


def compile_bytecode(env: dict[str, str]) -> None:
    import kvlint

    package = Path(kvlint.__file__).parent
    clean = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(package)],
        env=clean,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.0f} ms"


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--runs", type=int, default=15, help="runs per one-file timing (median)")
    ap.add_argument("--set-runs", type=int, default=3, help="runs per whole-set timing (median)")
    ap.add_argument("--scale", default="100,1000,10000", help="document counts for the scale table")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="--jobs for the parallel column")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        raise SystemExit(f"no corpus at {args.corpus} (pass --corpus DIR)")

    env = dict(os.environ)
    env.pop("KVLINT_NO_CACHE", None)
    kvlint = [sys.executable, "-m", "kvlint"] if tool("kvlint") is None else tool("kvlint")
    yamllint = tool("yamllint")
    compile_bytecode(env)

    import ruamel.yaml

    work = Path(tempfile.mkdtemp(prefix="kvlint-speed-"))
    env["KVLINT_CACHE_DIR"] = str(work / "cache")
    try:
        files = sorted(p for p in args.corpus.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        counted = [(p, count_documents(p)) for p in files]
        corpus = work / "corpus"
        corpus.mkdir()
        for p in files:
            shutil.copyfile(p, corpus / p.name)
        corpus_docs = sum(c for _, c in counted)
        print(
            f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, ruamel.yaml "
            f"{ruamel.yaml.__version__}, yamllint {'absent' if not yamllint else _version(yamllint)}"
        )
        print(f"corpus: {len(files)} files, {corpus_docs} documents ({args.corpus})\n")

        # (a) one typical file, as pre-commit runs a hook
        by_size = sorted(files, key=lambda p: p.stat().st_size)
        typical = by_size[len(by_size) // 2]
        one = work / "one"
        one.mkdir()
        shutil.copyfile(typical, one / "deploy.yaml")
        configured = work / "configured"
        configured.mkdir()
        shutil.copyfile(typical, configured / "deploy.yaml")
        (configured / ".kvlint.yaml").write_text("fail-on: warning\nignore: [KV004]\ngpu: H100\n")
        run([*kvlint, "deploy.yaml"], configured, env)  # first run validates and caches the config
        cmds = {"kvlint": [*kvlint, "deploy.yaml"]}
        if yamllint:
            cmds["yamllint"] = [*yamllint, "deploy.yaml"]
        floor_py = [sys.executable, "-c", "pass"]
        cmds["python -c pass"] = floor_py
        cmds["kvlint (.kvlint.yaml)"] = ([*kvlint, "deploy.yaml"], configured)
        res = median_of(cmds, one, env, args.runs)
        res_cfg = {"kvlint (.kvlint.yaml)": res.pop("kvlint (.kvlint.yaml)")}
        print(
            f"(a) one file, fresh process each, median of {args.runs}: {typical.name} "
            f"({typical.stat().st_size:,} bytes)"
        )
        for name, (t, peak) in {**res, **res_cfg}.items():
            print(f"    {name:<24}{ms(t)}   peak {peak / 1024:5.1f} MiB")
        if yamllint:
            ratio = res["kvlint"][0] / res["yamllint"][0]
            ratio_cfg = res_cfg["kvlint (.kvlint.yaml)"][0] / res["yamllint"][0]
            print(
                f"    kvlint / yamllint = {ratio:.2f} (with a config: {ratio_cfg:.2f}); target <= 1.00: "
                f"{verdict(ratio <= 1.0)}"
            )
        print()

        # (b) + (c) whole sets
        targets = sorted({int(x) for x in args.scale.split(",") if x.strip()})
        sets: dict[int, tuple[Path, int, int]] = {}
        for target in targets:
            n_files, docs = replicate(counted, target, work / f"docs{target}")
            sets[target] = (work / f"docs{target}", n_files, docs)
        print(
            f"(b) whole sets, one process each, median of {args.set_runs}; (c) the floor: ruamel.yaml parse"
        )
        header = f"    {'set':<22}{'kvlint':>11}{'yamllint':>11}{'rt parse':>11}{'C parse':>11}  ratios"
        print(header)
        whole = [("corpus", corpus, len(files), corpus_docs)]
        if 1000 in sets:
            whole.append(("corpus x ~1,000 docs", *sets[1000]))
        for label, folder, _n_files, docs in whole:
            paths = sorted(str(p) for p in folder.rglob("*.y*ml"))
            cmds = {"kvlint": [*kvlint, "."]}
            if yamllint:
                cmds["yamllint"] = [*yamllint, "."]
            cmds["rt"] = [sys.executable, "-c", FLOOR, "rt", *paths]
            cmds["safe"] = [sys.executable, "-c", FLOOR, "safe", *paths]
            r = median_of(cmds, folder, env, args.set_runs)
            kv, rt, safe = r["kvlint"][0], r["rt"][0], r["safe"][0]
            yl = r["yamllint"][0] if yamllint else float("nan")
            print(
                f"    {label + f' ({docs})':<22}{ms(kv)}{ms(yl)}{ms(rt)}{ms(safe)}  "
                f"yamllint/kvlint {yl / kv:.1f}x (target >= 2: {verdict(yl / kv >= 2)}); "
                f"kvlint/rt-parse {kv / rt:.2f} (target <= 1.5: {verdict(kv / rt <= 1.5)})"
            )
            print(f"    {'':<22}throughput: kvlint {docs / kv:,.0f} docs/s, yamllint {docs / yl:,.0f} docs/s")
        print()

        # (d) scale
        print(f"(d) scale: kvlint on N documents (serial, and --jobs {args.jobs})")
        print(
            f"    {'documents':>10}{'files':>8}{'wall':>11}{'per doc':>10}{'peak RSS':>11}"
            f"{'--jobs':>11}{'per doc':>10}{'peak RSS':>11}"
        )
        for target in targets:
            folder, n_files, docs = sets[target]
            runs = 1 if docs > 5000 else args.set_runs
            r = median_of(
                {"serial": [*kvlint, "."], "jobs": [*kvlint, "--jobs", str(args.jobs), "."]},
                folder,
                env,
                runs,
            )
            (s_t, s_rss), (j_t, j_rss) = r["serial"], r["jobs"]
            print(
                f"    {docs:>10,}{n_files:>8,}{ms(s_t)}{s_t / docs * 1000:8.2f}ms{s_rss / 1024:8.1f}MiB"
                f"{ms(j_t)}{j_t / docs * 1000:8.2f}ms{j_rss / 1024:8.1f}MiB"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _version(cmd: list[str]) -> str:
    out = subprocess.run([*cmd, "--version"], capture_output=True, text=True).stdout.strip()
    return out.split()[-1] if out else "?"


if __name__ == "__main__":
    main()
