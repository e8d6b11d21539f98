"""Reading a file kvlint did not write: only a regular file, never more than a cap.

The file is opened without blocking (a FIFO swapped in after a check cannot hang the run), its
type is checked on the open descriptor (no race between the check and the read), and the read
stops at `cap + 1` bytes whatever the file claims its size is (/dev/zero claims 0).
Every file kvlint reads from the project or the environment (manifests, configuration files,
.gitignore, model files, its own cache) goes through here; only the package's shipped data does not.
"""

from __future__ import annotations

import os
import stat
from typing import Any, BinaryIO


def json_value(text: str | bytes) -> Any:
    """json.loads for text from input: nesting too deep to read (100,000 `[`) is a ValueError, as
    any other malformed JSON, never a RecursionError the callers do not expect (security review S18)."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


class NotRegular(OSError):
    """The path is a directory, FIFO, socket or device."""


class TooLarge(OSError):
    """The file holds more than the cap."""

    def __init__(self, message: str, size: int = 0) -> None:
        super().__init__(message)
        self.size = size  # the file's size as its inode states it (exact for a regular file)


def open_regular(path: str) -> BinaryIO:
    """A binary file object on `path`, only if it is a regular file (NotRegular otherwise); opened
    without blocking, so a FIFO cannot hang the open, and checked on the descriptor itself."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        raise NotRegular(f"{path}: not a regular file (a directory, pipe, socket or device)")
    # From here the file object owns the descriptor and closes it when it is dropped, also when
    # Ctrl-C lands as the call returns. Closing it again here would fail with "Bad file descriptor",
    # an OSError that hid the interrupt (the run went on and reported the file unreadable), or
    # close the next file another thread had just opened under the same number.
    return os.fdopen(fd, "rb")


def read_regular(path: str, cap: int) -> bytes:
    """The bytes of a regular file of at most `cap` bytes; OSError (NotRegular, TooLarge) otherwise."""
    with open_regular(path) as fh:
        return read_open(fh, path, cap)


def read_open(fh: BinaryIO, path: str, cap: int) -> bytes:
    """At most `cap` bytes from an open file (TooLarge past them), read in pieces: a large cap must
    not allocate its whole size up front, and a file that claims 0 bytes (/dev/zero) still stops."""
    chunks: list[bytes] = []
    left = cap + 1
    while left > 0:
        chunk = fh.read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    size = os.fstat(fh.fileno()).st_size
    data = b"".join(chunks)
    if len(data) > cap:
        raise TooLarge(f"{path}: larger than {cap:,} bytes", max(size, len(data)))
    return data


def read_text(path: str, cap: int) -> str:
    """A regular file of at most `cap` bytes as UTF-8 text (OSError, UnicodeDecodeError otherwise)."""
    return read_regular(path, cap).decode("utf-8-sig")


def shown(path: str) -> str:
    """A path kvlint read, as a message shows it (security review F29: no runner's home or
    filesystem layout in a report): relative to the working directory when it lies inside it,
    `~/…` when it lies in the home directory, else as it was given (as the user wrote it)."""
    try:
        absolute, cwd = os.path.abspath(path), os.getcwd()
    except (OSError, ValueError):
        return path
    if absolute == cwd or absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, cwd)
    home = os.path.expanduser("~")
    if os.path.isabs(home) and home != os.sep and absolute.startswith(home.rstrip(os.sep) + os.sep):
        return "~" + absolute[len(home.rstrip(os.sep)) :]
    return path


def base_dir(path: str) -> str:
    """The directory of a linted file, relative to the working directory (`.` for it): the base of
    the relative paths the file names (model: ./dir), and of every message about them."""
    try:
        return os.path.relpath(os.path.dirname(os.path.abspath(path)))
    except (OSError, ValueError):
        return os.path.dirname(path) or "."


def nearest_up(folder: str, markers: tuple[str, ...], depth: int) -> str | None:
    """The nearest folder at or above `folder` (at most `depth` of them) holding any of `markers`
    (`.git`, a configuration file): a repository's top. None when none of them does."""
    here = folder
    for _ in range(depth):
        if any(os.path.lexists(os.path.join(here, m)) for m in markers):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up
    return None


def is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def inside(path: str, cwd: str | None = None) -> bool:
    """False when `path` lies lexically inside the working directory but its real path does not: a
    symbolic link in the repository that leads out of it (`deploy -> ../outside`, `deploy -> /`),
    which a pull request can add. A path named outside the working directory (`/srv/manifests`,
    `../other`) is the caller's own choice, not the repository's content, and is followed."""
    try:
        cwd = cwd or os.getcwd()
        if not _under(os.path.abspath(path), cwd):
            return True
        return _under(os.path.realpath(path), os.path.realpath(cwd))
    except (OSError, ValueError):
        return False


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)
