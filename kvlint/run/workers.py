"""Lint many files in worker processes (`--jobs`), results in the same order as one process.

Each file is independent, so the pool maps files to FileResults and the run keeps discovery
order: the report is byte-identical whatever --jobs is. Workers are given the settings the main
process already validated (the configuration is read once: a file edited during the run cannot
make the workers disagree with the main process, security review F27), and register the extra
GPUs and models those settings carry, so they reach the workers under any start method.

How many workers, and how the files are dealt to them, follows from the work (`plan`): never more
workers than CPUs this process may use, and no worker for less than a share of MIN_SHARE bytes of
work (a file counts its size plus FILE_COST, the cost of linting an empty file in bytes of text),
so small runs stay in one process. The main process lints the first files itself before the pool
starts: the modules, catalogs and tables those files need are loaded once and each forked worker
inherits them, instead of every worker loading them again. Figures: benchmarks/speed.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kvlint.record import record
from kvlint.run.lint import FileResult, read_and_lint
from kvlint.run.settings import Settings

# Work is counted in bytes of text. Linting a file costs about what 4 KiB of YAML costs beyond its
# own bytes (the resolve, plan and rules of its workloads); a worker is worth starting for about
# 100 ms of work on the development machine (a forked, warm worker starts in a few ms, and the
# results it sends back cost the main process time too).
FILE_COST = 4 * 1024
MIN_SHARE = 256 * 1024
CHUNKS_PER_WORKER = (
    4  # files dealt in this many batches a worker: big enough to send, small enough to balance
)
WARM_FILES = 4  # linted by the main process before the pool forks

_settings: Settings | None = None
_keep_deployments = True


@record(frozen=True)
class Plan:
    workers: int  # 1: everything in this process
    chunk: int = 1  # files a worker takes at a time
    warm: int = 0  # the first files, linted in this process before the pool starts


def plan(jobs: int, sizes: list[int], cpus: int | None = None) -> Plan:
    """The worker count and chunking for files of these sizes: `jobs` is the most workers asked
    for (0: one per CPU), `cpus` the processors this process may use."""
    cpus = cpus if cpus is not None else _cpus()
    wanted = min(jobs if jobs > 0 else cpus, cpus)
    work = sum(sizes) + FILE_COST * len(sizes)
    workers = max(1, min(wanted, work // MIN_SHARE, len(sizes)))
    if workers <= 1:
        return Plan(1)
    warm = min(WARM_FILES, len(sizes) // 2)
    rest = len(sizes) - warm
    chunk = max(1, min(64, -(-rest // (workers * CHUNKS_PER_WORKER))))
    return Plan(workers, chunk, warm)


def _cpus() -> int:
    """The CPUs this process may run on (a container's limit, not the host's count, on Linux)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _sizes(files: list[tuple[str, str]]) -> list[int]:
    out = []
    for path, _shown in files:
        try:
            out.append(os.stat(path).st_size)
        except OSError:
            out.append(0)  # reported when it is read
    return out


def lint_files(
    files: list[tuple[str, str]], settings: Settings, jobs: int, keep_deployments: bool
) -> Iterator[FileResult | str]:
    """(path, display) pairs -> a FileResult, or the reason a file could not be read, in order."""
    how = plan(jobs, _sizes(files)) if jobs != 1 and len(files) > 1 else Plan(1)
    serial = len(files) if how.workers <= 1 else how.warm
    for path, shown in files[:serial]:
        yield _compact(read_and_lint(path, settings, shown), keep_deployments)
    if serial == len(files):
        return
    import gc
    import multiprocessing

    _preload()
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else methods[0])
    gc.freeze()  # what the main process holds stays shared with the forked workers (no copy on collect)
    try:
        with context.Pool(how.workers, initializer=_init, initargs=(settings, keep_deployments)) as pool:
            yield from pool.imap(_lint_one, files[serial:], chunksize=how.chunk)
    finally:
        gc.unfreeze()


def _preload() -> None:
    """Every input kind's reader, loaded in this process before the pool forks: a large run meets
    most kinds, and each worker would otherwise import the ones the warm files did not."""
    from kvlint.extract import registry

    for ref in {*registry.KUBERNETES_KINDS.values(), *registry.GROUP_KINDS.values()}:
        registry.load(ref)
    for _name, claims, read in registry.DOCUMENT_KINDS:
        registry.load(claims)
        registry.load(read)


def _compact(result: FileResult | str, keep_deployments: bool) -> FileResult | str:
    if not keep_deployments and not isinstance(result, str):
        result.deployments = []  # only the JSON and Markdown reports list deployments
    return result


def _init(settings: Settings, keep_deployments: bool) -> None:
    global _settings, _keep_deployments
    import signal

    signal.signal(
        signal.SIGINT, signal.SIG_IGN
    )  # Ctrl-C is the parent's to report (S21): no worker traceback
    settings.register_catalog()
    _settings = settings
    _keep_deployments = keep_deployments


def _lint_one(item: tuple[str, str]) -> FileResult | str:
    assert _settings is not None
    path, shown = item
    return _compact(read_and_lint(path, _settings, shown), _keep_deployments)
