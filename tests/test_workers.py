"""--jobs: the worker count and chunking follow from the work (run/workers.plan), and the report is
the same whatever they are. Counted, not timed: benchmarks/speed.py times --jobs 2 against --jobs 1."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main
from kvlint.run import workers

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


def _sizes() -> list[int]:
    """The sizes of the fixture files, a real mix of small specs and larger manifests."""
    return sorted(p.stat().st_size for p in FIXTURES.rglob("*.yaml"))


def test_a_small_run_stays_in_one_process():
    sizes = _sizes()
    assert (
        workers.plan(2, sizes[:10], cpus=2).workers == 1
    )  # ten files: a worker would cost more than it saves
    assert workers.plan(0, [3_000] * 20, cpus=8).workers == 1
    assert workers.plan(2, [], cpus=2).workers == 1


def test_a_large_run_uses_the_workers_asked_for_never_more_than_cpus():
    sizes = [3_600] * 300  # the corpus: 300 manifests of 3.6 kB on average
    assert workers.plan(2, sizes, cpus=2).workers == 2
    assert workers.plan(8, sizes, cpus=2).workers == 2  # more workers than CPUs only share them
    assert workers.plan(0, sizes, cpus=4).workers == 4  # 0: one per CPU
    assert workers.plan(2, sizes, cpus=1).workers == 1
    assert workers.plan(1, sizes, cpus=2).workers == 1


def test_the_workers_grow_with_the_bytes_not_only_the_file_count():
    """Four large Helm values files are as much work as a hundred small manifests."""
    assert workers.plan(4, [400_000] * 4, cpus=4).workers == 4
    assert workers.plan(4, [200] * 4, cpus=4).workers == 1


def test_every_file_is_dealt_once_in_chunks_that_balance():
    how = workers.plan(2, [3_600] * 300, cpus=2)
    rest = 300 - how.warm
    assert 0 < how.warm < 300
    # each worker gets several chunks (so one slow file does not leave the other idle), and together
    # the chunks cover every file
    assert rest // how.chunk >= how.workers * 2
    assert how.chunk * how.workers * workers.CHUNKS_PER_WORKER >= rest


def test_forced_workers_give_the_serial_report(monkeypatch, force_workers):
    """With the pool forced on a small run (every file worth a worker), warm files, chunks and
    workers still give the serial report byte for byte."""
    import multiprocessing

    started: list[str] = []
    real = multiprocessing.get_context

    def context(method=None):
        started.append(method)
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_context", context)
    monkeypatch.chdir(FIXTURES.parent)
    runner = CliRunner()
    serial = runner.invoke(main, ["--format", "json", "--jobs", "1", "fixtures/KV102", "fixtures/KV208"])
    parallel = runner.invoke(main, ["--format", "json", "--jobs", "2", "fixtures/KV102", "fixtures/KV208"])
    assert serial.exit_code == parallel.exit_code == 1
    assert serial.stdout == parallel.stdout
    assert len(started) == 1  # the pool ran once, for the parallel run only


def test_jobs_zero_means_one_per_cpu_not_serial(monkeypatch):
    """--jobs 0 reaches the planner as 0 (it used to be read as "unset" and become 1)."""
    asked: list[int] = []
    real = workers.plan

    def spy(jobs, sizes, cpus=None):
        asked.append(jobs)
        return real(jobs, sizes, cpus)

    monkeypatch.setattr(workers, "plan", spy)
    monkeypatch.chdir(FIXTURES.parent)
    CliRunner().invoke(main, ["--format", "concise", "--jobs", "0", "fixtures/KV102"])
    assert asked == [0]
