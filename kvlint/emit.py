"""Writing what kvlint prints, where a failure is the environment's, not the input's (security
review F26): an `--output` that cannot be written, a closed or full standard output, a pipe closed
early, an output encoding that cannot carry the report. Each is one clear line on stderr and exit 2
— never a traceback, never exit 1 (which means "findings").

`--output` is checked before any file is linted (a missing directory is found in milliseconds, not
after the run), and every write is checked again when it happens (/proc/version passes the first
check and fails the write).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

OUTPUT_FAILED = 2


def output_problem(path: str) -> str | None:
    """Why the report could not be written to `path`, or None when it can be tried."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return f"--output {path}: directory {os.path.dirname(path) or '.'} does not exist"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"--output {path}: not writable"
    if not os.path.exists(path) and not os.access(directory, os.W_OK | os.X_OK):
        return f"--output {path}: cannot create a file in {os.path.dirname(path) or '.'}"
    return None


def say(text: str) -> None:
    """One diagnostic line on stderr, inert for the GitHub runner (no `::` line start, no `##[`);
    nothing (and no exception) when stderr cannot take it."""
    from kvlint.report.safe import runner_lines

    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(runner_lines(text.rstrip("\n")) + "\n")
        stream.flush()
    except (OSError, ValueError):
        _discard(stream)


def write(text: str, stream: TextIO | None, what: str = "the report") -> str | None:
    """Write `text` to a standard stream; the reason it failed, or None."""
    if stream is None:
        return f"cannot write {what}: standard output is closed"
    try:
        stream.write(text)
        stream.flush()
    except UnicodeEncodeError as exc:
        char = exc.object[exc.start : exc.start + 1]
        encoding = getattr(stream, "encoding", None) or "?"
        return (
            f"cannot write {what}: the output encoding {encoding!r} cannot represent {char!r} "
            "(set PYTHONIOENCODING=utf-8, or a UTF-8 locale)"
        )
    except BrokenPipeError:
        _discard(stream)
        return f"cannot write {what}: the reader closed the pipe (broken pipe)"
    except (OSError, ValueError) as exc:
        _discard(stream)
        reason = getattr(exc, "strerror", None) or str(exc)
        return f"cannot write {what} to standard output: {reason}"
    return None


def write_file(text: str, path: str) -> str | None:
    """Write the report to `--output`; the reason it failed, or None."""
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        return f"--output {path}: cannot write: {exc.strerror or exc}"
    return None


def _discard(stream: TextIO) -> None:
    """Point a failed stream at /dev/null, so the interpreter's flush at exit finds nothing to fail on."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass
