"""Size and look-up cost of the shipped model catalog (a script, not a test).

    python benchmarks/catalog_bench.py [--runs 20]

Prints: ids and distinct architectures; models.json bytes on disk and deflated (as a wheel stores it);
the first look-up (read + index models.json, parse one config) with this process's caches cleared, and in
a new interpreter (what a hook run pays); a warm
look-up (lookup() of every id, median per id); a cold arch build per id (parse_config, median).
The budget the brief sets: package data <= 2 MB in the wheel, one look-up <= 5 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvlint.catalog import models  # noqa: E402


def _ms(fn, runs: int, clock=time.perf_counter) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = clock()
        fn()
        samples.append((clock() - start) * 1000)
    return min(samples), statistics.median(samples)


_FRESH = (
    "import time; from kvlint.catalog import models; t = time.process_time(); "
    "models.resolve('meta-llama/Llama-3.1-8B-Instruct'); print((time.process_time() - t) * 1000)"
)


def _fresh_process_ms() -> float:
    """The first resolve() in a new interpreter: the allocator and caches are cold, as in a hook run
    (bytecode is written, so only the first of these runs compiles)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run(
        [sys.executable, "-c", _FRESH], capture_output=True, text=True, cwd=ROOT, env=env, check=True
    )
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    path = Path(models.DATA, "models.json")
    raw = path.read_bytes()
    ids = models.all_ids()
    archs = len({(models.lookup(i) or {}).get("arch") for i in ids})
    print(f"ids {len(ids)}, archs {archs}")
    print(f"models.json {len(raw):,} bytes on disk, {len(zlib.compress(raw, 9)):,} bytes deflated")

    def cold() -> None:
        models._index.cache_clear()
        models.arch_for_entry.cache_clear()
        models.resolve("meta-llama/Llama-3.1-8B-Instruct")

    best, med = _ms(cold, args.runs)
    print(f"first look-up (read + index + parse one config): best {best:.2f} ms, median {med:.2f} ms")
    best, med = _ms(cold, args.runs, time.process_time)  # CPU time: wall time swells on a loaded machine
    print(f"first look-up, CPU time: best {best:.2f} ms, median {med:.2f} ms")
    fresh = [_fresh_process_ms() for _ in range(min(args.runs, 9))]
    print(
        f"first look-up in a fresh process (as a hook run pays it), CPU time: best {min(fresh):.2f} ms, "
        f"median {statistics.median(fresh):.2f} ms"
    )
    models.resolve(ids[0])

    per_id = []
    for ident in ids:
        start = time.perf_counter()
        models.lookup(ident)
        per_id.append((time.perf_counter() - start) * 1000)
    print(f"warm lookup(): median {statistics.median(per_id):.4f} ms, max {max(per_id):.4f} ms per id")

    builds = []
    for ident in ids:
        entry = models.lookup(ident)
        if entry is None or entry.get("kv_cache") == "none":
            continue
        models.arch_for_entry.cache_clear()
        start = time.perf_counter()
        models.arch_for_entry(ident.lower())
        builds.append((time.perf_counter() - start) * 1000)
    print(
        f"arch build (parse_config) per id: median {statistics.median(builds):.3f} ms, max {max(builds):.3f} ms"
    )


if __name__ == "__main__":
    main()
