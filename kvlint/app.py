"""What each command does, kept out of cli.py so the command line stays import-light."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

from kvlint.emit import OUTPUT_FAILED, output_problem, say, write, write_file
from kvlint.report.safe import plain

if TYPE_CHECKING:
    from kvlint.run.lint import RunResult
    from kvlint.run.settings import Settings


def run_check(paths: tuple[str, ...], fmt: str | None, output: str | None, opts: dict) -> int:
    from kvlint.report import render
    from kvlint.run.flags import build_settings
    from kvlint.run.lint import RunResult

    settings, error = build_settings(opts)
    if settings is None:
        say(f"kvlint: {plain(error or '')}")
        return 2
    refused = _refused(paths, output)
    if refused is not None:
        return refused
    fmt = fmt or _default_format(settings)
    run = RunResult()
    shown = _discover(run, paths, settings)
    fixing = opts.get("fix") or opts.get("unsafe_fixes") or opts.get("diff")
    report_stream: TextIO = sys.stdout
    if "-" in paths:
        report_stream = _lint_stdin(run, settings, opts, bool(fixing))
    if fixing and shown:
        done = _fix_files(shown, settings, opts, run.errors)
        if done is not None:
            return done
    _lint_files(run, shown, settings, _jobs(opts), keep=fmt in ("json", "markdown"))
    text = render(
        fmt,
        run,
        settings,
        color=fmt == "text" and not output and color_wanted(opts.get("color"), report_stream),
    )
    return _deliver(run, settings, text, output, report_stream, bool(opts.get("exit_zero")))


def _jobs(opts: dict) -> int:
    """--jobs as given: 0 is "one per CPU" (run/workers.py), not "unset"."""
    jobs = opts.get("jobs")
    return 1 if jobs is None else int(jobs)


def _refused(paths: tuple[str, ...], output: str | None) -> int | None:
    """The exit code when the run cannot start: no paths, or an --output it could not write."""
    if not paths:
        say("kvlint: no paths given (use `kvlint PATH…`, or `-` for stdin); see `kvlint --help`")
        return 2
    problem = output_problem(output) if output else None
    if problem:  # before any file is linted: the run's work would be lost
        say(f"kvlint: {plain(problem)}")
        return OUTPUT_FAILED
    return None


def _discover(run: RunResult, paths: tuple[str, ...], settings: Settings) -> list[tuple[str, str]]:
    """The files under the paths (stdin aside), as shown; what could not be read or was skipped
    goes on the run."""
    from kvlint.run.discover import discover

    found = discover([p for p in paths if p != "-"], settings.exclude, settings.respect_gitignore)
    run.errors.extend(found.errors)
    run.notes = found.notes[:10] + ([f"…and {len(found.notes) - 10} more"] if len(found.notes) > 10 else [])
    run.skipped = found.summary()
    return _displayed(found.files)


def _lint_files(
    run: RunResult, shown: list[tuple[str, str]], settings: Settings, jobs: int, keep: bool
) -> None:
    from kvlint.run.workers import lint_files

    for result in lint_files(shown, settings, jobs, keep):
        if isinstance(result, str):
            run.errors.append(result)
        else:
            run.files.append(result)


def _deliver(
    run: RunResult, settings: Settings, text: str, output: str | None, stream: TextIO, exit_zero: bool
) -> int:
    """Diagnostics on stderr, the report to its stream or file; the run's exit code."""
    from kvlint.run.lint import exit_code

    for err in run.errors + run.notes:  # diagnostics first, on stderr; the report alone goes to stdout
        say(f"kvlint: {plain(err)}")
    failed = write_file(text, output) if output else write(text, stream)
    if failed:  # the report was not delivered: not a verdict on the files (F26)
        say(f"kvlint: {plain(failed)}")
        return OUTPUT_FAILED
    if exit_zero and not run.errors and not any(r.crashed for r in run.files):
        return 0
    return exit_code(run, settings)


def _lint_stdin(run: RunResult, settings: Settings, opts: dict, fixing: bool) -> TextIO:
    """Lint (and, when fixing, fix) stdin into `run`; the stream the report then goes to."""
    from kvlint.fileio import base_dir
    from kvlint.run.lint import lint_text

    display = opts.get("stdin_filename") or "<stdin>"
    data = sys.stdin.buffer.read(settings.max_file_size + 1)
    base = base_dir(display) if opts.get("stdin_filename") else "."
    stream: TextIO = sys.stdout
    if fixing:
        data, stream = _fix_stdin(data, display, settings, base, opts, run.errors), sys.stderr
    run.files.append(lint_text(data, display, settings, base))
    return stream


def _default_format(settings: Settings) -> str:
    """The configured format, else `github` under GitHub Actions, else `text`."""
    return settings.sources.get("format-value") or (
        "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    )


def _displayed(files: list[str]) -> list[tuple[str, str]]:
    """(path, how the report shows it): relative to the working directory where it lies inside it."""
    cwd = os.getcwd()
    return [
        (p, (os.path.relpath(p) if not os.path.isabs(p) or p.startswith(cwd) else p).replace(os.sep, "/"))
        for p in files
    ]


def _fix_files(shown: list[tuple[str, str]], settings: Settings, opts: dict, errors: list[str]) -> int | None:
    """Apply (or, with --diff, show) the fixes; the exit code when --diff ends the run, else None."""
    from kvlint.fix.diff import for_runner
    from kvlint.fix.files import fix_files, summary
    from kvlint.run.lint import file_linter

    fixed = fix_files(
        shown,
        lambda path, display: file_linter(settings, display, path),
        settings.max_file_size,
        bool(opts.get("unsafe_fixes")),
        write=not opts.get("diff"),
    )
    errors.extend(fixed.errors)
    if opts.get("diff"):
        failed = write(for_runner(fixed.diff), sys.stdout, "the diff")
        for err in errors + ([failed] if failed else []):
            say(f"kvlint: {plain(err)}")
        return 2 if errors or failed else (1 if fixed.diff else 0)
    _say_lines(summary(fixed, bool(opts.get("show_fixes"))))
    return None


def _say_lines(text: str) -> None:
    for line in text.splitlines():  # file names in it: each line neutralised, as every diagnostic is
        say(plain(line))


def _fix_stdin(data: bytes, display: str, settings, base: str, opts: dict, errors: list[str]) -> bytes:
    """Fix text read from stdin: the fixed text (or, with --diff, the diff) goes to stdout and the
    report to stderr, as ruff does."""
    from kvlint.fix.apply import fix_bytes
    from kvlint.fix.diff import for_runner, unified
    from kvlint.fix.files import FixRun, summary
    from kvlint.run.lint import file_linter

    new, outcome = fix_bytes(
        data, display, file_linter(settings, display, base=base), bool(opts.get("unsafe_fixes"))
    )
    errors.extend(outcome.refused)  # a fix whose check failed: not applied, and the run exits 2
    if opts.get("diff"):
        sys.stdout.write(for_runner(unified(display, outcome.before, outcome.after)))
        return data
    sys.stdout.buffer.write(new)
    sys.stdout.flush()
    done = FixRun(applied=[(display, a) for a in outcome.applied], changed_files=int(outcome.changed))
    _say_lines(summary(done, bool(opts.get("show_fixes"))))
    return new


def color_wanted(flag: bool | None, stream) -> bool:
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def list_rules(fmt: str, link_base: str = "rules/") -> str:
    """The rule index; Markdown links each code to its page under `link_base` (docs/rules.md is this
    table with `../rules/`)."""
    from kvlint.rules import all_rules

    rules = all_rules()
    if fmt == "json":
        import json

        return (
            json.dumps(
                [
                    {
                        "code": r.id,
                        "name": r.name,
                        "severity": r.severity.label,
                        "summary": r.summary(),
                        "needs": list(r.needs.facts),
                        "fix": r.fix_applicability,
                    }
                    for r in rules
                ],
                indent=2,
            )
            + "\n"
        )
    if fmt == "markdown":
        rows = ["| code | name | severity | what it checks | fix |", "|---|---|---|---|---|"]
        rows += [
            f"| [{r.id}]({link_base}{r.id}.md) | {r.name} | {r.severity.label} | {r.summary()} | {r.fix_applicability} |"
            for r in rules
        ]
        return "\n".join(rows) + "\n"
    width = max(len(r.name) for r in rules)
    return "\n".join(f"{r.id}  {r.name:<{width}}  {r.severity.label:<7}  {r.summary()}" for r in rules) + "\n"


def explain_rule(name: str) -> tuple[str, bool]:
    from kvlint.rules import get
    from kvlint.run.ruledocs import page_text

    rule = get(name)
    if rule is None:
        return f"kvlint: no rule {name!r} (see `kvlint rules`)\n", False
    return page_text(rule), True


def run_upgrade(paths: tuple[str, ...], to: str | None, fmt: str, opts: dict) -> int:
    """`kvlint upgrade`: the discovered files walked from each deployment's release to `to`."""
    from kvlint.run.flags import build_settings
    from kvlint.run.lint import RunResult
    from kvlint.upgrade.command import bad_to, walk_paths

    settings, error = build_settings(opts)
    problem = error if settings is None else bad_to(to)
    if settings is None or problem:
        say(f"kvlint: {plain(problem or '')}")
        return 2
    refused = _refused(paths, None)
    if refused is not None:
        return refused
    if "-" in paths:
        say("kvlint: upgrade reads files and directories, not stdin (-)")
        return 2
    run = RunResult()
    shown = _discover(run, paths, settings)
    errors = list(run.errors)
    text, code = walk_paths(shown, settings, to, fmt, errors)
    for err in errors + run.notes:
        say(f"kvlint: {plain(err)}")
    failed = write(text, sys.stdout)
    if failed:
        say(f"kvlint: {plain(failed)}")
        return OUTPUT_FAILED
    return code


def run_plan(model: str, gpus: list[str], fmt: str, opts: dict) -> tuple[str, int]:
    from kvlint.planner import plan_command

    return plan_command(model, gpus, fmt, opts)


def show_config(config_path: str | None, isolated: bool) -> tuple[str, int]:
    from kvlint.report import config_report
    from kvlint.run.config import ConfigError, load_settings

    try:
        settings = load_settings(config_path, isolated)
    except ConfigError as exc:
        return f"kvlint: {plain(str(exc))}\n", 2
    return config_report.render(settings), 0
