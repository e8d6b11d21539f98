"""Reading a file to fix and writing it back so that the write can neither escape nor corrupt.

- The file is opened through its directory's descriptor with O_NOFOLLOW: a symbolic link (the file
  or a link swapped in for it later) is never followed.
- Its real place must stay inside the tree being linted (`kvlint.fileio.inside`): a file lexically under the
  working directory must really be there, not behind a link that leads out of it.
- The new text goes to a temporary file in the same directory (same mode bits, owner where kvlint may
  set it), which is flushed to disk (fsync) and renamed over the file (os.replace): a failed write
  (a full disk, a quota, RLIMIT_FSIZE) leaves the original as it was, never a truncated mix.
- At write time, under the same directory descriptor, the file must still be the inode read
  (device, inode, size, mtime): a file swapped for a link or edited while the lint ran is not written.
- A file with more than one hard link is not written: a rename would split it from its other names.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat

from kvlint.fileio import NotRegular, inside, read_open
from kvlint.record import record

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class Refused(OSError):
    """The file is not one kvlint writes (a link, outside the tree, hard-linked, changed since read)."""


@record(frozen=True)
class Identity:
    """What the file was when it was read: its directory and its inode, size and modification time."""

    dir_dev: int
    dir_ino: int
    dev: int
    ino: int
    size: int
    mtime_ns: int
    mode: int
    uid: int
    gid: int


def _open_dir(path: str) -> int:
    return os.open(os.path.dirname(os.path.abspath(path)) or os.sep, os.O_RDONLY | _DIRECTORY)


def read_for_fix(path: str, cap: int) -> tuple[bytes, Identity]:
    """The file's bytes and identity; Refused for a link, a file outside the tree or a hard-linked one."""
    if not inside(path):
        raise Refused(f"{path}: its real path leaves the working directory (a symbolic link); not written")
    dir_fd = _open_dir(path)
    try:
        fd = os.open(
            os.path.basename(path), os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd
        )
    except OSError as exc:
        os.close(dir_fd)
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise Refused(f"{path}: a symbolic link; kvlint does not write through links") from exc
        raise
    try:
        st, dst = os.fstat(fd), os.fstat(dir_fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{path}: not a regular file")
        if st.st_nlink > 1:
            raise Refused(
                f"{path}: has {st.st_nlink} hard links; kvlint writes a new file and would split them; not written"
            )
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = read_open(fh, path, cap)
        ident = Identity(
            dst.st_dev,
            dst.st_ino,
            st.st_dev,
            st.st_ino,
            st.st_size,
            st.st_mtime_ns,
            st.st_mode,
            st.st_uid,
            st.st_gid,
        )
        return data, ident
    finally:
        os.close(fd)
        os.close(dir_fd)


def _same(st: os.stat_result, ident: Identity) -> bool:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (
        ident.dev,
        ident.ino,
        ident.size,
        ident.mtime_ns,
    )


def write_fixed(path: str, data: bytes, ident: Identity) -> None:
    """Replace the file read as `ident` by `data` atomically; Refused or OSError (the original kept)."""
    if not inside(path):
        raise Refused(f"{path}: its real path now leaves the working directory; not written")
    dir_fd = _open_dir(path)
    try:
        dst = os.fstat(dir_fd)
        if (dst.st_dev, dst.st_ino) != (ident.dir_dev, ident.dir_ino):
            raise Refused(f"{path}: its directory was replaced while it was being fixed; not written")
        name = os.path.basename(path)
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
        except OSError as exc:
            raise Refused(
                f"{path}: replaced while it was being fixed (now a link or gone); not written"
            ) from exc
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if not _same(st, ident) or st.st_nlink > 1:
            raise Refused(f"{path}: changed while it was being fixed; not written")
        _replace(dir_fd, name, data, ident)
    finally:
        os.close(dir_fd)


def _replace(dir_fd: int, name: str, data: bytes, ident: Identity) -> None:
    tmp = f".{name}.kvlint-{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, stat.S_IMODE(ident.mode))
            if (os.fstat(fd).st_uid, os.fstat(fd).st_gid) != (ident.uid, ident.gid):
                # only root may give a file away: else the new file is the writer's, as an editor's is
                with contextlib.suppress(PermissionError):
                    os.fchown(fd, ident.uid, ident.gid)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):  # the rename itself on disk (not every filesystem syncs a directory)
        os.fsync(dir_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
