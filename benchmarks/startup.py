"""Start-up and per-file timings of the kvlint command (a script, not a test).

    python benchmarks/startup.py [--runs 10]

Prints the best and median wall time of: `python -c pass` (the floor), `kvlint --version`,
`kvlint --help`, and `kvlint FILE` on a few fixtures, each in a fresh process as a pre-commit
hook would run it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, check=False)
        samples.append(time.perf_counter() - start)
    return min(samples), statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    kv = [sys.executable, "-m", "kvlint"]
    cases = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("kvlint --version", [*kv, "--version"]),
        ("kvlint --help", [*kv, "--help"]),
        ("kvlint <spec that fits>", [*kv, "--isolated", "fixtures/KV102/good-llama-8b-l4-16k.yaml"]),
        ("kvlint <spec, KV102 error>", [*kv, "--isolated", "fixtures/KV102/bad-llama-8b-l4-128k.yaml"]),
        ("kvlint fixtures/ (all)", [*kv, "--isolated", "fixtures"]),
    ]
    print(f"{'command':<30} {'best ms':>8} {'median ms':>10}")
    for name, cmd in cases:
        best, median = timed(cmd, args.runs)
        print(f"{name:<30} {best * 1000:8.1f} {median * 1000:10.1f}")


if __name__ == "__main__":
    main()
