"""Reading a file kvlint did not write: only a regular file, never more than a cap.

The file is opened without blocking (a FIFO swapped in after a check cannot hang the run), its
type is checked on the open descriptor (no race between the check and the read), and the read
stops at `cap + 1` bytes whatever the file claims its size is (/dev/zero claims 0).
"""

from __future__ import annotations

import os
import stat


class NotRegular(OSError):
    """The path is a directory, FIFO, socket or device."""


class TooLarge(OSError):
    """The file holds more than the cap."""


def read_regular(path: str, cap: int) -> bytes:
    """The bytes of a regular file of at most `cap` bytes; OSError (NotRegular, TooLarge) otherwise."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{path}: not a regular file (a directory, pipe, socket or device)")
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:
        raise TooLarge(f"{path}: larger than {cap:,} bytes")
    return data


def is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
