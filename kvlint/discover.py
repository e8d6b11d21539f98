"""Which files a run lints: explicit files, directories walked for *.yaml/*.yml/*.json, minus
excludes (gitignore-style globs) and what .gitignore lists. Symlink loops are walked once."""

from __future__ import annotations

import fnmatch
import os
import re

from kvlint.record import field, record

SUFFIXES = (".yaml", ".yml", ".json")
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".ruff_cache",
}


@record
class Found:
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _glob_to_regex(pattern: str) -> re.Pattern:
    """A gitignore-style glob: `*` within a segment, `**` across segments, leading `/` anchors."""
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    pat = pattern.strip("/")
    parts = []
    i = 0
    while i < len(pat):
        if pat.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            parts.append(".*")
            i += 2
        elif pat[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif pat[i] == "?":
            parts.append("[^/]")
            i += 1
        else:
            parts.append(re.escape(pat[i]))
            i += 1
    body = "".join(parts)
    prefix = "^" if anchored else "^(?:.*/)?"
    return re.compile(prefix + body + "(?:/.*)?$")


class Ignorer:
    def __init__(self, patterns: list[str]) -> None:
        self.rules: list[tuple[bool, re.Pattern]] = []
        for p in patterns:
            p = p.strip()
            if not p or p.startswith("#"):
                continue
            negate = p.startswith("!")
            self.rules.append((negate, _glob_to_regex(p[1:] if negate else p)))

    def ignored(self, rel: str) -> bool:
        rel = rel.replace(os.sep, "/").lstrip("./")
        out = False
        for negate, rx in self.rules:
            if rx.match(rel):
                out = not negate
        return out


def _gitignore_patterns(root: str) -> list[str]:
    pats: list[str] = []
    path = os.path.join(root, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            pats = [line.rstrip("\n") for line in fh]
    except OSError:
        pass
    return pats


def discover(paths: list[str], exclude: list[str], respect_gitignore: bool = True) -> Found:
    found = Found()
    cwd = os.getcwd()
    ignorer = Ignorer(list(exclude) + (_gitignore_patterns(cwd) if respect_gitignore else []))
    for path in paths:
        if not os.path.lexists(path):
            found.errors.append(f"{path}: no such file or directory")
            continue
        if os.path.isdir(path):
            _walk(path, ignorer, found, cwd, respect_gitignore)
        elif os.path.exists(path):
            # explicit files are linted whatever their suffix (pre-commit passes them by type), but excludes apply
            rel = os.path.relpath(path, cwd)
            if not (exclude and Ignorer(list(exclude)).ignored(rel)):
                found.files.append(path)
        else:
            found.errors.append(f"{path}: broken symbolic link")
    return found


def _walk(top: str, ignorer: Ignorer, found: Found, cwd: str, respect_gitignore: bool) -> None:
    seen: set[tuple[int, int]] = set()
    local_ignores: dict[str, Ignorer] = {}
    for dirpath, dirnames, filenames in os.walk(
        top,
        followlinks=True,
        onerror=lambda e: found.errors.append(f"{e.filename}: cannot read directory: {e.strerror}"),
    ):
        try:
            st = os.stat(dirpath)
        except OSError:
            dirnames[:] = []
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:  # a symlink loop or a second link to the same directory
            dirnames[:] = []
            continue
        seen.add(key)
        if respect_gitignore and dirpath != top and os.path.isfile(os.path.join(dirpath, ".gitignore")):
            local_ignores[dirpath] = Ignorer(_gitignore_patterns(dirpath))
        rel_dir = os.path.relpath(dirpath, cwd)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not ignorer.ignored(os.path.join(rel_dir, d) + "/")
            and not _locally_ignored(local_ignores, dirpath, d)
        )
        for name in sorted(filenames):
            if not name.endswith(SUFFIXES):
                continue
            rel = os.path.join(rel_dir, name)
            if ignorer.ignored(rel) or _locally_ignored(local_ignores, dirpath, name):
                continue
            found.files.append(os.path.join(dirpath, name))


def _locally_ignored(local: dict[str, Ignorer], dirpath: str, name: str) -> bool:
    for base, ign in local.items():
        if dirpath == base or dirpath.startswith(base + os.sep):
            if ign.ignored(os.path.relpath(os.path.join(dirpath, name), base)):
                return True
    return False


__all__ = ["Found", "Ignorer", "discover", "fnmatch"]
