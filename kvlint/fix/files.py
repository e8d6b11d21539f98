"""`--fix`, `--unsafe-fixes` and `--diff` over files: read each, fix it in rounds, write it back (or
only show the diff). The only place kvlint writes a user's file; it writes a file only when its text
changed, only a regular file inside the tree, never one it could not decode as UTF-8, and only
atomically (kvlint/fix/write.py says how)."""

from __future__ import annotations

from collections.abc import Callable

from kvlint.fix.apply import Applied, Lint, fix_bytes
from kvlint.fix.diff import unified
from kvlint.fix.write import Refused, read_for_fix, write_fixed
from kvlint.record import field, record


@record
class FixRun:
    diff: str = ""
    applied: list[tuple[str, Applied]] = field(default_factory=list)  # (shown path, what was applied)
    changed_files: int = 0
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def fix_files(
    shown: list[tuple[str, str]],
    lint_for: Callable[[str, str], Lint],
    max_size: int,
    unsafe: bool,
    write: bool,
) -> FixRun:
    """Fix each (path on disk, path as shown); write the new text back when `write`, else collect a diff.
    `lint_for(path, shown)`: the linter of that file; `max_size`: the largest file read, in bytes.
    Only a file written counts as fixed: a refused or failed write is an error (exit 2), located."""
    run = FixRun()
    for path, display in shown:
        try:
            data, ident = read_for_fix(path, max_size)
        except Refused as exc:
            run.skipped.append(display + str(exc)[len(path) :])
            continue
        except OSError:
            continue  # not a regular file, too large or unreadable: the lint run reports it
        new, outcome = fix_bytes(data, display, lint_for(path, display), unsafe)
        run.errors.extend(outcome.refused)  # a fix whose check failed: not applied, and the run exits 2
        if not outcome.changed:
            continue
        if not write:
            run.diff += unified(display, outcome.before, outcome.after)
        else:
            try:
                write_fixed(path, new, ident)
            except OSError as exc:
                reason = str(exc)[len(path) + 2 :] if isinstance(exc, Refused) else exc.strerror or str(exc)
                run.errors.append(f"{display}: cannot write the fixed file: {reason}; the file is unchanged")
                continue
        run.changed_files += 1
        run.applied.extend((display, a) for a in outcome.applied)
    return run


def summary(run: FixRun, show: bool) -> str:
    """What --fix did, for stderr: a count, and with --show-fixes every fix applied."""
    notes = [f"kvlint: not fixed: {s}" for s in run.skipped]
    if not run.applied:
        return "\n".join([*notes, "kvlint: nothing to fix"]) + "\n"
    lines = notes + [
        f"kvlint: fixed {len(run.applied)} finding{'s' if len(run.applied) != 1 else ''} "
        f"in {run.changed_files} file{'s' if run.changed_files != 1 else ''}"
    ]
    if show:
        lines += [f"  {path}:{a.line}: {a.rule} {a.message} [{a.applicability}]" for path, a in run.applied]
    return "\n".join(lines) + "\n"
