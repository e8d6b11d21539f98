"""Which files a run lints: explicit files, directories walked for *.yaml/*.yml/*.json, minus
excludes (gitignore-style globs) and what .gitignore lists.

- Patterns are matched by `wildmatch` (linear; no regular expression built from input).
- A .gitignore is read only if it is a regular file of at most MAX_GITIGNORE_BYTES; a larger one
  (or a FIFO, device or directory) is not read and the run says so.
- Walks do not follow directory symlinks (each is named on stderr), nor file symlinks that lead
  out of the directory being walked (each is an error: a manifest named but not checked).
- A named path inside the working directory whose real path leaves it (`deploy -> /`, a link a
  pull request can commit in place of the directory a workflow names) is refused the same way:
  an error, exit 2, nothing under it walked, linted or written.
- Nothing is skipped silently: the run counts what .gitignore and excludes skipped, a path given
  explicitly is linted even if .gitignore lists it, and a named directory that yields no file
  because ignore rules skipped them all is an error.
"""

from __future__ import annotations

import os

from kvlint.fileio import NotRegular, TooLarge, inside, is_regular, read_regular, shown
from kvlint.record import field, record
from kvlint.wildmatch import Pattern, compile_pattern, normalize

SUFFIXES = (".yaml", ".yml", ".json", ".tf")  # .tf: the Kubernetes objects Terraform carries
MAX_GITIGNORE_BYTES = 256 * 1024
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
    notes: list[str] = field(default_factory=list)  # what was not read or not followed, and why
    skipped_gitignore: int = 0  # paths (files or whole directories) .gitignore made the walk skip
    skipped_exclude: int = 0  # paths excludes made the run skip
    skipped_links: int = 0  # symlinks not followed

    def summary(self) -> str:
        """`3 paths skipped by .gitignore, 1 by exclude, 2 symbolic links not followed`, or ""."""
        parts = []
        if self.skipped_gitignore:
            parts.append(f"{self.skipped_gitignore} by .gitignore")
        if self.skipped_exclude:
            parts.append(f"{self.skipped_exclude} by exclude patterns")
        if self.skipped_links:
            parts.append(
                f"{self.skipped_links} symbolic link{'s' if self.skipped_links != 1 else ''} not followed"
            )
        return "skipped: " + ", ".join(parts) if parts else ""


class Ignorer:
    """Ordered gitignore rules relative to one base directory; the last rule that matches wins."""

    def __init__(self, patterns: list[str]) -> None:
        self.rules: list[Pattern] = [p for p in (compile_pattern(line) for line in patterns) if p is not None]

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        """The path itself (not its parents): walks prune ignored directories as they go."""
        rel = normalize(rel)
        out = False
        for rule in self.rules:
            if out != (not rule.negate) and rule.matches(rel, is_dir):
                out = not rule.negate
        return out

    def ignored_with_parents(self, rel: str, is_dir: bool = False) -> bool:
        """The path or any directory above it (git cannot re-include a file of an ignored directory)."""
        names = normalize(rel).split("/")
        for depth in range(1, len(names)):
            if self.ignored("/".join(names[:depth]), True):
                return True
        return self.ignored("/".join(names), is_dir)


def gitignore_patterns(directory: str, notes: list[str] | None = None) -> list[str]:
    """The lines of `directory/.gitignore` if it is a regular file within the size cap."""
    path = os.path.join(directory, ".gitignore")
    if not os.path.lexists(path):
        return []
    try:
        data = read_regular(path, MAX_GITIGNORE_BYTES)
    except OSError as exc:
        if notes is not None:
            notes.append(f"{shown(path)}: not read ({_reason(exc)}); its patterns are not applied")
        return []
    return data.decode("utf-8", "replace").splitlines()


def _reason(exc: OSError) -> str:
    if isinstance(exc, NotRegular):
        return "not a regular file"
    if isinstance(exc, TooLarge):
        return f"larger than {MAX_GITIGNORE_BYTES:,} bytes"
    return exc.strerror or type(exc).__name__


def discover(paths: list[str], exclude: list[str], respect_gitignore: bool = True) -> Found:
    found = Found()
    cwd = os.getcwd()
    excluder = Ignorer(list(exclude))
    root_ignore = Ignorer(gitignore_patterns(cwd, found.notes) if respect_gitignore else [])
    for path in paths:
        if not os.path.lexists(path):
            found.errors.append(f"{path}: no such file or directory")
            continue
        if (os.path.isdir(path) or is_regular(path)) and not inside(path, cwd):
            # `deploy -> /` or `-> ../outside`, committed in place of the directory a workflow names:
            # not walked, linted or fixed (security review 3, S7); a manifest named but not checked
            found.errors.append(
                f"{path}: leads out of the working directory through a symbolic link; not followed "
                "(kvlint reads and fixes only what lies inside it; name the real path to lint it)"
            )
            continue
        if os.path.isdir(path):
            before = len(found.files), found.skipped_gitignore + found.skipped_exclude
            _walk(path, excluder, root_ignore, found, cwd, respect_gitignore)
            skipped = found.skipped_gitignore + found.skipped_exclude - before[1]
            if len(found.files) == before[0] and skipped:
                found.errors.append(
                    f"{path}: every manifest under it is skipped by .gitignore or exclude patterns "
                    f"({skipped} path{'s' if skipped != 1 else ''}); nothing was checked "
                    "(--no-gitignore lints what .gitignore lists)"
                )
        elif os.path.exists(path):
            # explicit files are linted whatever their suffix (pre-commit passes them by type) and
            # whatever .gitignore says (the user named them), but excludes apply
            if exclude and excluder.ignored_with_parents(os.path.relpath(path, cwd)):
                found.skipped_exclude += 1
            else:
                found.files.append(path)
        else:
            found.errors.append(f"{path}: broken symbolic link")
    return found


def _inside(real: str, top_real: str) -> bool:
    return real == top_real or real.startswith(top_real.rstrip(os.sep) + os.sep)


def _walk(
    top: str, excluder: Ignorer, root_ignore: Ignorer, found: Found, cwd: str, respect_gitignore: bool
) -> None:
    top_real = os.path.realpath(top)
    local: list[tuple[str, Ignorer]] = []  # (directory, its .gitignore), the named one included
    cwd_real = os.path.realpath(cwd)
    for dirpath, dirnames, filenames in os.walk(
        top,
        followlinks=False,
        onerror=lambda e: found.errors.append(f"{e.filename}: cannot read directory: {e.strerror}"),
    ):
        local = [(base, ign) for base, ign in local if dirpath == base or dirpath.startswith(base + os.sep)]
        if respect_gitignore and os.path.realpath(dirpath) != cwd_real:
            pats = gitignore_patterns(dirpath, found.notes)
            if pats:
                local.append((dirpath, Ignorer(pats)))
        rel_dir = os.path.relpath(dirpath, cwd)
        keep_dirs = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in SKIP_DIRS:
                continue
            if os.path.islink(full):
                found.skipped_links += 1
                found.notes.append(f"{full}: a symbolic link to a directory; not followed")
                continue
            if _skipped(found, excluder, root_ignore, local, os.path.join(rel_dir, d), full, True):
                continue
            keep_dirs.append(d)
        dirnames[:] = keep_dirs
        for name in sorted(filenames):
            if not name.endswith(SUFFIXES):
                continue
            full = os.path.join(dirpath, name)
            if os.path.islink(full) and not os.path.exists(full):
                found.errors.append(f"{full}: broken symbolic link")
                continue
            if os.path.islink(full) and not _inside(os.path.realpath(full), top_real):
                found.skipped_links += 1
                # a manifest kvlint was pointed at but does not check: fail closed (exit 2)
                found.errors.append(f"{full}: a symbolic link out of {top}; not followed")
                continue
            if _skipped(found, excluder, root_ignore, local, os.path.join(rel_dir, name), full, False):
                continue
            found.files.append(full)


def _skipped(
    found: Found, excluder: Ignorer, root_ignore: Ignorer, local, rel: str, full: str, is_dir: bool
) -> bool:
    if excluder.ignored(rel, is_dir):
        found.skipped_exclude += 1
        return True
    outside = rel == ".." or rel.startswith(".." + os.sep)  # the root .gitignore covers only its tree
    if (not outside and root_ignore.ignored(rel, is_dir)) or any(
        ign.ignored(os.path.relpath(full, base), is_dir) for base, ign in local
    ):
        found.skipped_gitignore += 1
        return True
    return False


__all__ = ["Found", "Ignorer", "discover", "gitignore_patterns"]
