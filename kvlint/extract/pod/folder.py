"""A folder a container reads at start-up that its command line names (Triton's model repository,
`tritonserver --model-repository=/models/repo`), as far as what is linted holds it: the files of ConfigMaps
mounted under the path (mounted.py), else a folder of the linted tree the path maps to.

The path maps to a folder of the tree when the linted file's directory holds it at the path's own spelling
without its leading `/` (`/models/repo` -> `models/repo/`) or under the path's last part (`repo/`), or the
parent directory does, inside a repository (a `.git` or kvlint configuration at or above it, as
load/nearby.py `named_beside` reads folders beside). Read as the directory walk reads (security review S20):
at most ENTRIES_MAX entries of the folder, regular files of at most FILE_BYTES, no link that leaves it.
"""

from __future__ import annotations

import os
import posixpath
import stat

from kvlint.extract.pod import mounted
from kvlint.extract.pod.argv import Token
from kvlint.extract.pod.mounted import MountedFile
from kvlint.fileio import TooLarge, nearest_up, read_regular
from kvlint.findings import Location
from kvlint.load.nearby import BESIDE_FILE_BYTES, FOLDERS_MAX, REPOSITORY_DEPTH, REPOSITORY_MARKERS, Nearby
from kvlint.load.tree import Mapping
from kvlint.record import field, record

# as for other folders beside a file (load/nearby.py): at most FOLDERS_MAX models of one repository
# (tensorrtllm_backend's inflight_batcher_llm has 5), files of at most BESIDE_FILE_BYTES (a config.pbtxt is ~20 KB,
# an engine's config.json a few KB)
ENTRIES_MAX = FOLDERS_MAX
FILE_BYTES = BESIDE_FILE_BYTES


@record
class Folder:
    path: str  # as the container sees it
    commands: list[list[Token]] = field(
        default_factory=list
    )  # the container's commands (scripts that fill it)
    shown: str = ""  # the tree folder as findings show it; "" when the tree holds none
    real: str = ""  # its path on disk
    looked: tuple[str, ...] = ()  # the folder names it was looked for as, beside the linted file
    nearby: Nearby | None = None
    pod: Mapping | None = None
    container: Mapping | None = None

    def entries(self) -> list[str]:
        """The folder's sub-folders (a model repository's models), sorted: those ConfigMaps are mounted in,
        then the tree's, the first ENTRIES_MAX."""
        names = set(self._mounted_entries())
        if self.real:
            try:
                with os.scandir(self.real) as it:
                    for n, entry in enumerate(it):
                        if n >= 4 * ENTRIES_MAX:
                            break
                        if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                            names.add(entry.name)
            except OSError:
                pass
        return sorted(names)[:ENTRIES_MAX]

    def _mounted_entries(self) -> list[str]:
        if self.container is None:
            return []
        top = posixpath.normpath(self.path)
        out = []
        for mount in self.container.seq("volumeMounts") or ():
            at = (
                posixpath.normpath(str(mount.value("mountPath") or "/")) if isinstance(mount, Mapping) else ""
            )
            if at.startswith(top.rstrip("/") + "/"):
                out.append(at[len(top.rstrip("/")) + 1 :].split("/")[0])
        return out

    def read(self, relative: str) -> MountedFile | None:
        """The text of `relative` under the folder: a mounted ConfigMap's key, else the tree's file; None when
        neither holds it (MountedFile.why says what kept one that is there unread)."""
        inside = posixpath.normpath(relative)
        if inside.startswith("..") or posixpath.isabs(inside):
            return None
        if self.pod is not None and self.container is not None:
            found = mounted.text_at(self.nearby, self.pod, self.container, posixpath.join(self.path, inside))
            if found is not None:
                return found
        if not self.real:
            return None
        return _tree_file(self.real, self.shown, inside)


def _tree_file(top: str, shown: str, relative: str) -> MountedFile | None:
    path = os.path.join(top, *relative.split("/"))
    display = posixpath.join(shown, relative)
    try:
        if not os.path.lexists(path):
            return None
        real, root = os.path.realpath(path), os.path.realpath(top)
        if os.path.commonpath([real, root]) != root:
            return MountedFile(None, None, f"{display} is a link that leaves the folder")
        if not stat.S_ISREG(os.stat(real).st_mode):
            return MountedFile(None, None, f"{display} is not a regular file")
        data = read_regular(real, FILE_BYTES)
    except TooLarge:
        return MountedFile(None, None, f"{display} is larger than {FILE_BYTES:,} bytes")
    except OSError:
        return MountedFile(None, None, f"{display} cannot be read")
    return MountedFile(data.decode("utf-8", "replace"), Location(display, 1, 1))


def folder_at(
    nearby: Nearby | None, pod: Mapping, container: Mapping, path: str, commands: list[list[Token]]
) -> Folder:
    """The folder `path` of this container, with the tree folder it maps to when there is one."""
    out = Folder(path=path, commands=commands, nearby=nearby, pod=pod, container=container)
    if nearby is None or nearby.real_path is None or not path.strip():
        return out
    own = os.path.dirname(os.path.abspath(nearby.real_path))
    shown_own = os.path.dirname(nearby.display)
    spelled = posixpath.normpath(path).lstrip("/")
    last = posixpath.basename(posixpath.normpath(path))
    if not spelled or spelled.startswith("..") or not last or last in (".", ".."):
        return out
    candidates = [(own, shown_own, spelled), (own, shown_own, last)]
    parent = os.path.dirname(own)
    if parent != own and nearest_up(parent, REPOSITORY_MARKERS, REPOSITORY_DEPTH) is not None:
        candidates.append((parent, posixpath.dirname(shown_own) if shown_own else "..", last))
    out.looked = tuple(dict.fromkeys((spelled, last)))
    for top, shown_top, relative in candidates:
        display = posixpath.normpath(posixpath.join(shown_top, relative)) if shown_top else relative
        where = os.path.join(top, *relative.split("/"))
        try:
            real = os.path.realpath(where)
            inside = os.path.commonpath([real, os.path.realpath(top)]) == os.path.realpath(top)
            if inside and os.path.isdir(real):
                out.shown, out.real = display, real
                break
        except (OSError, ValueError):
            continue
    return out
