"""The property campaign: rounds of the hypothesis tests until a number of cases has run.

    nice -n 10 python benchmarks/campaign.py --cases 50000 --log campaign.log [--round 500] [-k EXPR]

Each round runs tests/test_properties.py, tests/test_fuzz.py and tests/test_campaign_kinds.py (every
input kind, engine flags in shell scripts, suppressions; determinism across hash seeds and --jobs,
exit codes) under the `campaign` profile with
KVLINT_FUZZ_EXAMPLES=ROUND (fresh random seeds each round), reads hypothesis' statistics
(passing, failing and invalid examples per test) and appends one line per round to the log, so a
campaign stopped early still reports what ran. The command-line tests (slow: a process-like run
per case) get a fiftieth of the round (each runs several kvlint processes).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_TESTS = (
    "test_command_line_exit_codes",
    "test_hostile_file_names_and_types_through_the_command_line",
    "test_reports_are_deterministic_and_exit_codes_honest",
)
ROUND_TIMEOUT = 3600  # a round that runs longer than this is a hang: counted as a failure
_TEST = re.compile(r"^tests/\S+::(\S+):$")
_COUNTS = re.compile(r"- (\d+) passing, (\d+) failing, and (\d+) invalid")


def parse_statistics(text: str) -> dict[str, tuple[int, int]]:
    """Test name -> (passing, failing) cases, summed over hypothesis' phases."""
    out: dict[str, tuple[int, int]] = {}
    current = None
    for line in text.splitlines():
        m = _TEST.match(line.strip())
        if m:
            current = m.group(1)
            continue
        c = _COUNTS.search(line)
        if c and current:
            p, f = out.get(current, (0, 0))
            out[current] = (p + int(c.group(1)), f + int(c.group(2)))
    return out


def run_round(
    examples: int, select: str, extra_env: dict[str, str]
) -> tuple[dict[str, tuple[int, int]], int, str]:
    env = {**os.environ, "KVLINT_FUZZ": "campaign", "KVLINT_FUZZ_EXAMPLES": str(examples), **extra_env}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
           "tests/test_properties.py", "tests/test_fuzz.py", "tests/test_campaign_kinds.py",
           "-k", select]  # fmt: skip
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=ROUND_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else str(exc.stdout or "")
        return parse_statistics(out), -1, f"round timed out after {ROUND_TIMEOUT} s\n" + out[-3000:]
    return parse_statistics(proc.stdout), proc.returncode, proc.stdout[-3000:]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=50_000)
    ap.add_argument("--round", type=int, default=500)
    ap.add_argument("--log", default="campaign.log")
    ap.add_argument("-k", default="not hash_seed and not every_real_manifest_unmutated and not nested_serve")
    args = ap.parse_args()
    total = failing = 0
    started = time.time()
    log = Path(args.log)
    n = 0
    while total < args.cases:
        n += 1
        t0 = time.time()
        fast, rc1, out1 = run_round(args.round, f"({args.k}) and not ({' or '.join(CLI_TESTS)})", {})
        slow, rc2, out2 = run_round(
            max(1, args.round // 50), f"({args.k}) and ({' or '.join(CLI_TESTS)})", {}
        )
        stats = {**fast, **slow}
        cases = sum(p + f for p, f in stats.values())
        bad = sum(f for _, f in stats.values()) + (rc1 != 0) + (rc2 != 0)
        total += cases
        failing += bad
        with log.open("a") as fh:
            fh.write(
                f"round {n}: {cases} cases in {time.time() - t0:.0f} s, failures {bad}; "
                f"total {total} cases, {failing} failures, {time.time() - started:.0f} s; "
                + ", ".join(f"{k}={p}" for k, (p, _) in sorted(stats.items()))
                + "\n"
            )
            if bad:
                fh.write(out1 + "\n" + out2 + "\n")
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
