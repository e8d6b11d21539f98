"""Speed of kvlint, paired with yamllint in one run (a script, not a test).

    python benchmarks/speed.py [--corpus DIR ...] [--runs 11] [--set-runs 11]

Every figure is a fresh process, as pre-commit and CI start one, timed from outside with its peak
memory (the largest single process's max RSS). Commands that are compared run as interleaved pairs
(A B, then B A, ...), so a change in the machine's load hits both alike; each row gives the median
of its runs, and each ratio is the median of the pairs' ratios. Measured:

(a) one file, as a pre-commit hook runs: `kvlint FILE` against `yamllint FILE` on the corpus file
    of median size, with no configuration and with a `.kvlint.yaml` beside it. Target: kvlint at
    or under yamllint's wall time.
(b) `--jobs 2` against `--jobs 1` on the corpus (the folders given, linted in one run). Target:
    `--jobs 2` faster.
(c) the corpus copied round-robin to 300 files, and to 1,000 documents: kvlint against yamllint.

yamllint comes with the bench extra (`pip install -e '.[bench]'`); without it the script says so and
measures kvlint alone. kvlint's bytecode (and yamllint's) is compiled first, as pip does on install:
an editable checkout run with PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module on
every start. The machine's load average is printed at the start and the end: on a shared machine,
quote figures taken when it is low. Exit status: 0 every target met, 1 a target missed, 2 a target
could not be measured (yamllint missing, or no corpus).
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
SHARED = Path(os.environ.get("KVLINT_SHARED", ROOT.parent / "shared"))
DEFAULT_CORPUS = [SHARED / "corpus" / "manifests", SHARED / "corpus" / "manifests2"]
CONFIG = "fail-on: warning\nignore: [KV004]\ngpu: H100\n"  # a typical project configuration

# A small launcher runs the command and reports its wall time, CPU time and peak memory: a command
# forked straight from this process would carry this process's resident pages into its own
# high-water mark (Linux keeps the larger of the two across exec).
LAUNCH = """
import os, sys, time
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
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(out, "w") as fh:
    fh.write(f"{wall} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


class Sample:
    def __init__(self, wall: float, cpu: float, peak_kib: int) -> None:
        self.wall, self.cpu, self.peak_kib = wall, cpu, peak_kib


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> Sample:
    """One fresh process: wall and CPU seconds, and the peak RSS of its largest process (workers
    included: they are reaped before it exits)."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as result:
        subprocess.run([sys.executable, "-S", "-c", LAUNCH, result.name, *cmd], cwd=cwd, env=env, check=True)
        wall, cpu, peak, code = result.read().split()
    if int(code) not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {code} in {cwd}")
    return Sample(float(wall), float(cpu), int(peak))


class Series:
    """The runs of one command."""

    def __init__(self, label: str, cmd: list[str], cwd: Path) -> None:
        self.label, self.cmd, self.cwd = label, cmd, cwd
        self.samples: list[Sample] = []

    def wall(self) -> float:
        return statistics.median(s.wall for s in self.samples)

    def cpu(self) -> float:
        return statistics.median(s.cpu for s in self.samples)

    def peak_mib(self) -> float:
        return max(s.peak_kib for s in self.samples) / 1024

    def ratio(self, other: Series, what: str = "wall") -> float:
        """The median over the pairs of this run's figure over the other's."""
        return statistics.median(
            getattr(a, what) / getattr(b, what) for a, b in zip(self.samples, other.samples, strict=True)
        )


def interleaved(series: list[Series], runs: int, env: dict[str, str]) -> None:
    """`runs` rounds over the commands, each round in the reverse order of the one before."""
    for i in range(runs):
        for s in series if i % 2 == 0 else reversed(series):
            s.samples.append(run(s.cmd, s.cwd, env))


def tool(name: str) -> list[str] | None:
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return [str(beside)]
    found = shutil.which(name)
    return [found] if found else None


def version(cmd: list[str]) -> str:
    out = subprocess.run([*cmd, "--version"], capture_output=True, text=True).stdout.strip()
    return out.split()[-1] if out else "?"


def compile_bytecode(env: dict[str, str], packages: list[str]) -> None:
    """Compile each importable package's modules, as pip does on install."""
    import importlib.util

    clean = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for where in spec.submodule_search_locations:
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", where],
                env=clean,
                check=False,
                stdout=subprocess.DEVNULL,
            )


def count_documents(path: Path) -> int:
    from kvlint.load import load_bytes

    return max(1, sum(1 for d in load_bytes(path.read_bytes(), str(path), 1 << 30).documents if d.root))


def yaml_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def copy_corpus(folders: list[Path], into: Path) -> None:
    """The corpus folders side by side under `into`, as they are (each file keeps its neighbours)."""
    for folder in folders:
        shutil.copytree(folder, into / folder.name)


def replicate(
    files: list[tuple[Path, int]], into: Path, max_files: int = 0, min_docs: int = 0
) -> tuple[int, int]:
    """Copy the corpus files round-robin into `into` (a sub-folder per round) until it holds
    `max_files` files, or at least `min_docs` documents; (files, documents)."""
    into.mkdir(parents=True)
    docs = n = 0
    while (max_files and n < max_files) or (min_docs and docs < min_docs):
        src, count = files[n % len(files)]
        sub = into / f"copy{n // len(files):02d}"
        sub.mkdir(exist_ok=True)
        shutil.copyfile(src, sub / src.name)
        docs += count
        n += 1
    return n, docs


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def row(s: Series, against: Series | None = None) -> str:
    text = f"    {s.label:<34}{s.wall() * 1000:8.0f} ms{s.cpu() * 1000:8.0f} ms{s.peak_mib():9.1f} MiB"
    if against is not None:
        text += f"{s.ratio(against):9.2f}{s.ratio(against, 'cpu'):7.2f}"
    return text


HEADER = f"    {'':<34}{'wall':>11}{'cpu':>11}{'peak RSS':>13}"


def verdict(name: str, ok: bool | None) -> str:
    return f"    target: {name}: " + ("met" if ok else "MISSED" if ok is not None else "NOT MEASURED")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, nargs="+", default=DEFAULT_CORPUS, help="corpus folders")
    ap.add_argument("--runs", type=int, default=15, help="pairs for the one-file figures (median)")
    ap.add_argument("--set-runs", type=int, default=11, help="pairs for the whole-set figures (median)")
    args = ap.parse_args()
    folders = [c for c in args.corpus if c.is_dir()]
    if not folders:
        print(f"no corpus at {', '.join(map(str, args.corpus))} (pass --corpus DIR ...)")
        return 2

    env = dict(os.environ)
    env.pop("KVLINT_NO_CACHE", None)
    kvlint = tool("kvlint") or [sys.executable, "-m", "kvlint"]
    yamllint = tool("yamllint")
    compile_bytecode(env, ["kvlint", "yamllint", "yaml", "pathspec", "ruamel"])
    results: dict[str, bool | None] = {}

    import ruamel.yaml

    work = Path(tempfile.mkdtemp(prefix="kvlint-speed-"))
    env["KVLINT_CACHE_DIR"] = str(work / "cache")
    try:
        corpus = work / "corpus"
        copy_corpus(folders, corpus)
        files = yaml_files(corpus)
        counted = [(p, count_documents(p)) for p in files]
        corpus_docs = sum(c for _, c in counted)
        corpus_bytes = sum(p.stat().st_size for p in files)
        print(
            f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, ruamel.yaml {ruamel.yaml.__version__}"
        )
        print(f"load average at start: {load_average()}")
        print(f"yamllint: {version(yamllint) if yamllint else 'MISSING'}")
        if not yamllint:
            print(
                "    yamllint is not installed: the yamllint pairings are skipped and their targets not judged.\n"
                "    Install it with: pip install -e '.[bench]'   (or: pip install yamllint)"
            )
        print(
            f"corpus: {len(files)} files, {corpus_bytes:,} bytes, {corpus_docs:,} documents "
            f"({', '.join(f.name for f in folders)})\n"
        )

        # (a) one typical file, as pre-commit runs a hook
        first = yaml_files(corpus / folders[0].name)
        by_size = sorted(first, key=lambda p: (p.stat().st_size, p.name))
        typical = by_size[len(by_size) // 2]
        one, configured = work / "one", work / "configured"
        for where in (one, configured):
            where.mkdir()
            shutil.copyfile(typical, where / "deploy.yaml")
        (configured / ".kvlint.yaml").write_text(CONFIG)
        run([*kvlint, "deploy.yaml"], configured, env)  # the first run validates and caches the config
        a = [
            Series("kvlint FILE", [*kvlint, "deploy.yaml"], one),
            Series("kvlint FILE (.kvlint.yaml beside)", [*kvlint, "deploy.yaml"], configured),
        ]
        floor = Series("python -c pass (the floor)", [sys.executable, "-c", "pass"], one)
        yl = Series("yamllint FILE", [*yamllint, "deploy.yaml"], one) if yamllint else None
        interleaved([*a, *([yl] if yl else []), floor], args.runs, env)
        print(
            f"(a) one file, as a pre-commit hook runs: {typical.name} ({typical.stat().st_size:,} bytes), "
            f"{args.runs} rounds"
        )
        print(HEADER + ("   / yamllint: wall  cpu" if yl else ""))
        for s in a:
            print(row(s, yl))
        for s in [yl, floor]:
            if s is not None:
                print(row(s))
        ok = (max(s.ratio(yl) for s in a) <= 1.0) if yl else None
        results["one file: kvlint <= 1.0x yamllint (wall)"] = ok
        print(verdict("one file, kvlint <= 1.00x yamllint's wall time (both rows)", ok) + "\n")

        # (b) --jobs 2 against --jobs 1 on the corpus
        b = [
            Series("kvlint --jobs 1 (the default)", [*kvlint, "--jobs", "1", "."], corpus),
            Series("kvlint --jobs 2", [*kvlint, "--jobs", "2", "."], corpus),
        ]
        interleaved(b, args.set_runs, env)
        print(f"(b) --jobs on the corpus ({len(files)} files, {corpus_bytes:,} bytes), {args.set_runs} pairs")
        print(HEADER + "   / --jobs 1: wall  cpu")
        print(row(b[0]))
        print(row(b[1], b[0]))
        ok = b[1].ratio(b[0]) < 1.0
        results["--jobs 2 faster than --jobs 1"] = ok
        print(verdict("--jobs 2 faster than --jobs 1 (wall)", ok) + "\n")

        # (c) 300 files and 1,000 documents against yamllint
        sets = []
        n, docs = replicate(counted, work / "files300", max_files=300)
        sets.append((f"300 files ({docs:,} docs)", work / "files300"))
        n, docs = replicate(counted, work / "docs1000", min_docs=1000)
        sets.append((f"{docs:,} docs ({n} files)", work / "docs1000"))
        print(f"(c) sets, kvlint against yamllint, {args.set_runs} pairs")
        print(HEADER + ("   / yamllint: wall  cpu" if yl else ""))
        for label, folder in sets:
            kv = Series(f"kvlint, {label}", [*kvlint, "."], folder)
            kv2 = Series("  the same, kvlint --jobs 2", [*kvlint, "--jobs", "2", "."], folder)
            y = Series("  the same, yamllint", [*yamllint, "."], folder) if yamllint else None
            interleaved([kv, kv2, *([y] if y else [])], args.set_runs, env)
            print(row(kv, y))
            print(row(kv2, y))
            if y is not None:
                print(row(y))
        print(f"\nload average at end: {load_average()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        "targets: "
        + "; ".join(
            f"{k}: {'met' if v else 'MISSED' if v is not None else 'not measured'}"
            for k, v in results.items()
        )
    )
    if any(v is None for v in results.values()):
        return 2
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
