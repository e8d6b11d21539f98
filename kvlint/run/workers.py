"""Lint many files in worker processes (`--jobs`), results in the same order as one process.

Each file is independent, so the pool maps files to FileResults and the run keeps discovery
order: the report is byte-identical whatever --jobs is. Workers are given the settings the main
process already validated (the configuration is read once: a file edited during the run cannot
make the workers disagree with the main process, security review F27), and register the extra
GPUs and models those settings carry, so they reach the workers under any start method. Small
runs stay in one process: starting workers costs more than linting a few files (see
benchmarks/speed.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kvlint.run.lint import FileResult, read_and_lint
from kvlint.run.settings import Settings

MIN_FILES_PER_WORKER = 16  # below this a worker's start-up outweighs its share of the work

_settings: Settings | None = None
_keep_deployments = True


def effective_jobs(jobs: int, n_files: int) -> int:
    """`--jobs 0` means one per CPU; never more workers than MIN_FILES_PER_WORKER-sized shares."""
    wanted = jobs if jobs > 0 else _cpus()
    return max(1, min(wanted, n_files // MIN_FILES_PER_WORKER))


def _cpus() -> int:
    """The CPUs this process may run on (a container's limit, not the host's count, on Linux)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def lint_files(
    files: list[tuple[str, str]], settings: Settings, jobs: int, keep_deployments: bool
) -> Iterator[FileResult | str]:
    """(path, display) pairs -> a FileResult, or the reason a file could not be read, in order."""
    workers = effective_jobs(jobs, len(files))
    if workers <= 1:
        for path, shown in files:
            yield _compact(read_and_lint(path, settings, shown), keep_deployments)
        return
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else methods[0])
    chunk = max(1, min(64, len(files) // (workers * 8)))
    with context.Pool(workers, initializer=_init, initargs=(settings, keep_deployments)) as pool:
        yield from pool.imap(_lint_one, files, chunksize=chunk)


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
