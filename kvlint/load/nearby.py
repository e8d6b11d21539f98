"""Objects a file's workloads use that other documents define: a KServe InferenceService runs on a
ServingRuntime / ClusterServingRuntime that is usually its own document, in the same file or in a
file beside it. The file's own documents are given; the YAML files of its directory are read on first
use (regular files only, each at most the size cap, at most SIBLINGS_MAX of them, only those that
name one of the kinds asked for), so a directory of unrelated files costs one listing per run: the
listing is kept while the directory is unchanged (its mtime), however many files of it are linted
(security review S17). A sibling is read only as the directory walk would read it (S20): a regular
file, or a symbolic link to one that stays inside the directory; a link out is never followed.

An object asked for by name that is in neither may be in a folder beside the file's (a repository that
keeps `runtimes/` and `models/` apart, as NVIDIA/nim-deploy kserve/ does): `named_beside` reads the
folders of the parent directory the same way, one level down, at most FOLDERS_MAX of them (files of at
most BESIDE_FILE_BYTES), and only
inside a repository (a `.git` or kvlint configuration at or above the parent), so a file linted from
an arbitrary directory never has its neighbours' folders read."""

from __future__ import annotations

import os
import stat
from functools import lru_cache

from kvlint.fileio import TooLarge, nearest_up, read_regular
from kvlint.load import load_bytes  # Helm templates and YAML that does not parse give no objects
from kvlint.load.compose import Document
from kvlint.load.tree import Mapping, Scalar
from kvlint.record import field, record

SIBLINGS_MAX = 500  # files of one directory looked at; a larger directory is read up to this many
SUFFIXES = (".yaml", ".yml")
BESIDE_FILE_BYTES = 256 * 1024  # a .env or env_file named beside a file: far above any real one
FOLDERS_MAX = 32  # folders beside the file's own that a named object is looked for in (files of at most
# BESIDE_FILE_BYTES each: a runtime is a few KiB, and 32 folders of 500 files stay a bounded read)
REPOSITORY_MARKERS = (".git", ".kvlint.yaml", ".kvlint.yml")  # a repository's top (fileio.nearest_up)
REPOSITORY_DEPTH = 8


@record(frozen=True)
class Found:
    """One object another document defines, and where: `file` as findings show it, `same_file`
    when it is a document of the file being linted (its positions are then this file's)."""

    root: Mapping
    file: str
    same_file: bool


@record
class Nearby:
    display: str  # the linted file as findings show it
    real_path: str | None  # its path on disk; None for stdin (no directory is read)
    documents: list[Document] = field(default_factory=list)
    max_bytes: int = 8 * 1024 * 1024
    # the documents' positions by kind, made on first use: each workload asks, and 2,000 workloads
    # scanning 2,000 documents each cost seconds
    by_kind: dict[object, list[int]] | None = field(default=None, compare=False)
    # files read from a folder beside this one: how findings show each -> its path on disk
    beside: dict[str, str] = field(default_factory=dict, compare=False)

    def here(self, kinds: tuple[str, ...]) -> list[Found]:
        """Objects of these kinds among this file's own documents, in document order."""
        if self.by_kind is None:
            self.by_kind = {}
            for i, d in enumerate(self.documents):
                if isinstance(d.root, Mapping):
                    self.by_kind.setdefault(_hashable(d.root.value("kind")), []).append(i)
        at = sorted({i for kind in kinds for i in self.by_kind.get(kind, ())})
        roots = [self.documents[i].root for i in at]
        return [Found(root, self.display, True) for root in roots if isinstance(root, Mapping)]

    def objects(self, kinds: tuple[str, ...]) -> list[Found]:
        """Objects of these kinds: this file's documents first, then its directory's files (by name)."""
        out = self.here(kinds)
        if self.real_path is None:
            return out
        directory = os.path.dirname(os.path.abspath(self.real_path))
        shown = os.path.dirname(self.display)
        for name, root in _siblings(directory, os.path.basename(self.real_path), kinds, self.max_bytes):
            out.append(Found(root, os.path.join(shown, name) if shown else name, False))
        return out

    def named(self, kinds: tuple[str, ...], name: str) -> list[Found]:
        """Objects of these kinds whose metadata.name is `name`, as `objects()` orders them."""
        return [f for f in self.objects(kinds) if object_name(f.root) == name]

    def named_beside(self, kinds: tuple[str, ...], name: str) -> list[Found]:
        """Objects of these kinds named `name` in the YAML files of the folders beside this file's (its
        parent directory's other folders, by name), where the repository holds both; [] from stdin."""
        if self.real_path is None or not name:
            return []
        own = os.path.dirname(os.path.abspath(self.real_path))
        parent = os.path.dirname(own)
        if parent == own or nearest_up(parent, REPOSITORY_MARKERS, REPOSITORY_DEPTH) is None:
            return []
        shown = os.path.dirname(os.path.dirname(self.display)) if os.path.dirname(self.display) else ".."
        out: list[Found] = []
        for folder in _folders(parent, os.path.basename(own)):
            directory = os.path.join(parent, folder)
            for file, root in _siblings(directory, "", kinds, min(self.max_bytes, BESIDE_FILE_BYTES)):
                if object_name(root) == name:
                    display = os.path.normpath(os.path.join(shown, folder, file))
                    self.beside[display] = os.path.join(directory, file)
                    out.append(Found(root, display, False))
        return out

    def file_beside(self, relative: str, cap: int = BESIDE_FILE_BYTES) -> tuple[bytes | None, str, str]:
        """(bytes, how findings show it, why not) of a file the linted one names by a path relative
        to its own directory (compose's `.env`, an `env_file:`): read only when its real path stays
        inside that directory (no `..`, no absolute path, no link out: S20), it is a regular file and
        holds at most `cap` bytes. `why not` says what kept it unread ("" when read, "absent" when
        there is no such file)."""
        shown = os.path.normpath(os.path.join(os.path.dirname(self.display), relative))
        if self.real_path is None:
            return None, shown, "read from standard input: no directory to look in"
        if os.path.isabs(relative) or os.path.normpath(relative).split(os.sep)[0] == "..":
            return None, shown, "outside the file's directory"
        directory = os.path.dirname(os.path.abspath(self.real_path))
        path = os.path.join(directory, relative)
        try:
            if not os.path.lexists(path):
                return None, shown, "absent"
            real, top = os.path.realpath(path), os.path.realpath(directory)
            if os.path.commonpath([real, top]) != top:
                return None, shown, "a link that leaves the file's directory"
            return read_regular(real, cap), shown, ""
        except TooLarge:
            return None, shown, f"larger than {cap:,} bytes"
        except OSError:
            return None, shown, "not a regular file kvlint can read"

    def lines_of(self, shown: str) -> list[str]:
        """The text lines of a file beside this one, named as `objects()` shows it (empty if unreadable)."""
        if self.real_path is None:
            return []
        directory = os.path.dirname(os.path.abspath(self.real_path))
        path = os.path.join(directory, os.path.basename(shown))
        if shown in self.beside:  # a file of a folder beside this one (named_beside)
            path = self.beside[shown]
            directory = os.path.dirname(path)
        try:
            if _stat_inside(path, directory) is None:
                return []
            data = read_regular(path, self.max_bytes)
        except OSError:
            return []
        return data.decode("utf-8", "replace").splitlines()


@lru_cache(maxsize=64)
def _folder_listing(parent: str, _mtime: int) -> tuple[str, ...]:
    """The folders of `parent` (not hidden, not links), sorted, the first FOLDERS_MAX + 1."""
    names = []
    for entry in os.scandir(parent):
        if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
            names.append(entry.name)
    return tuple(sorted(names)[: FOLDERS_MAX + 1])


def _folders(parent: str, own: str) -> list[str]:
    try:
        names = _folder_listing(parent, os.stat(parent).st_mtime_ns)
    except OSError:
        return []
    return [n for n in names if n != own][:FOLDERS_MAX]


def _hashable(kind: object) -> object:
    """A document's `kind` value as a key (a list or a mapping written as the kind matches no name)."""
    try:
        hash(kind)
    except TypeError:
        return None
    return kind


def object_name(root: Mapping) -> str:
    """A Kubernetes object's metadata.name ("" when it has none)."""
    node = root.at("metadata", "name")
    return str(node.value) if isinstance(node, Scalar) and node.value is not None else ""


def _siblings(directory: str, own: str, kinds: tuple[str, ...], cap: int) -> list[tuple[str, Mapping]]:
    try:
        mtime = os.stat(directory).st_mtime_ns
        names = _listing(directory, mtime)
        relevant = _relevant(directory, mtime, kinds, cap)
    except OSError:
        return []
    limit = SIBLINGS_MAX + 1 if own in names else SIBLINGS_MAX  # the first SIBLINGS_MAX others
    out: list[tuple[str, Mapping]] = []
    for at, name in relevant:
        if at >= limit or name == own:
            continue
        path = os.path.join(directory, name)
        try:  # stat'ed again: a file changed during the run (--fix) is read again
            st = _stat_inside(path, directory)
        except OSError:
            continue
        if st is None:
            continue
        for root in _objects_of(path, st.st_mtime_ns, st.st_size, kinds, cap):
            out.append((name, root))
    return out


@lru_cache(maxsize=64)
def _relevant(directory: str, _mtime: int, kinds: tuple[str, ...], cap: int) -> tuple[tuple[int, str], ...]:
    """(position in the listing, name) of the siblings that hold an object of these kinds, found once
    per run: 1,000 files of a directory of 20,000 read its 500 first files once, not 1,000 times."""
    out = []
    for at, name in enumerate(_listing(directory, _mtime)):
        path = os.path.join(directory, name)
        try:
            st = _stat_inside(path, directory)
        except OSError:
            continue
        if st is not None and _objects_of(path, st.st_mtime_ns, st.st_size, kinds, cap):
            out.append((at, name))
    return tuple(out)


@lru_cache(maxsize=64)
def _listing(directory: str, _mtime: int) -> tuple[str, ...]:
    """The YAML names of a directory, sorted, listed once while it is unchanged: the first
    SIBLINGS_MAX + 1 are all any file of it reads (one more, as its own name may be among them)."""
    return tuple(sorted(n for n in os.listdir(directory) if n.endswith(SUFFIXES))[: SIBLINGS_MAX + 1])


def _stat_inside(path: str, directory: str) -> os.stat_result | None:
    """The stat of a sibling that is a regular file, or a link to one inside `directory`; None for
    anything else (a FIFO, a device, a directory, a link that leaves the directory)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        real, top = os.path.realpath(path), os.path.realpath(directory)
        if os.path.commonpath([real, top]) != top:
            return None
        st = os.stat(real)
    return st if stat.S_ISREG(st.st_mode) else None


@lru_cache(maxsize=1024)
def _objects_of(path: str, _mtime: int, _size: int, kinds: tuple[str, ...], cap: int) -> tuple[Mapping, ...]:
    """The objects of these kinds in one file (cached while the file is unchanged)."""
    try:
        data = read_regular(path, cap)
    except OSError:
        return ()
    if not any(k.encode() in data for k in kinds):
        return ()
    loaded = load_bytes(data, path, cap)
    return tuple(
        d.root for d in loaded.documents if isinstance(d.root, Mapping) and d.root.value("kind") in kinds
    )
