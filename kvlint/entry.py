"""The `kvlint` command's entry point.

`kvlint FILE…` with nothing but paths — how pre-commit calls a hook, many times a day — goes
straight to the linter with every option at its default; anything else (an option, a subcommand,
`-` for stdin, no argument at all) goes through the click command line in cli.py. Importing click
costs about 25 ms (it brings inspect, uuid and datetime), a fifth of a one-file run, so the common
call skips it. tests/test_cli.py checks that DEFAULTS is exactly what click would pass.

`kvlint-hook` is the pre-commit entry point. pre-commit calls `ENTRY ARGS… FILES…`, passing staged
file names unchanged, so a committed file named `--output=victim.yaml` would otherwise be read as
an option. The hook therefore takes options only from the leading `args:` and treats every
argument from the first file on as a path: an argument is an option only if it is a known option
name, or `--name=value` that does not name an existing file (every file pre-commit passes exists);
`--` ends the options explicitly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

COMMANDS = ("check", "rules", "explain", "plan", "upgrade", "config", "init", "models")

# What `kvlint check PATHS…` receives from click when no option is given (besides paths, --format
# and --output, which run_check takes separately).
DEFAULTS: dict[str, object] = {
    "gpu": None,
    "engine": None,
    "engine_version": None,
    "select": None,
    "extend_select": None,
    "ignore": None,
    "fail_on": None,
    "strict": None,
    "hub": None,
    "no_inline_suppressions": False,
    "show_suppressed": False,
    "show_infos": False,
    "exclude": (),
    "no_gitignore": False,
    "stdin_filename": None,
    "config_path": None,
    "isolated": False,
    "color": None,
    "max_file_size": None,
    "jobs": 1,
    "exit_zero": False,
    "fix": False,
    "unsafe_fixes": False,
    "diff": False,
    "show_fixes": False,
}


def only_paths(args: list[str]) -> bool:
    return bool(args) and not any(a.startswith("-") or a in COMMANDS for a in args)


def split_hook_args(args: list[str], options: dict[str, bool]) -> tuple[list[str], list[str]]:
    """(options, paths) of a hook call; `options` maps each option name to whether it takes a value."""
    opts: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return opts, args[i + 1 :]
        if arg in options:  # an exact option name: no file pre-commit passes is named like one
            if options[arg] and i + 1 < len(args):
                opts += [arg, args[i + 1]]
                i += 2
            else:
                opts.append(arg)
                i += 1
            continue
        name, eq, _ = arg.partition("=")
        if eq and name.startswith("--") and options.get(name) and not os.path.lexists(arg):
            opts.append(arg)
            i += 1
            continue
        break
    return opts, args[i:]


def _hook_options() -> dict[str, bool]:
    import click

    from kvlint.cli import check

    out: dict[str, bool] = {}
    for param in check.params:
        if isinstance(param, click.Option):
            for name in (*param.opts, *param.secondary_opts):
                out[name] = not param.is_flag
    return out


def hook_main() -> None:
    """`kvlint-hook [OPTIONS from args:] FILE…`: every file argument is a path, whatever its name."""
    interruptible(_hook_main)


def _hook_main() -> None:
    args = sys.argv[1:]
    if args and not args[0].startswith("-"):
        paths = [a if a != "-" else "./-" for a in args]
        from kvlint.app import run_check

        sys.exit(run_check(tuple(paths), None, None, dict(DEFAULTS)))
    opts, paths = split_hook_args(args, _hook_options())
    paths = [p if p != "-" else "./-" for p in paths]
    from kvlint.cli import main as command_line

    command_line(["check", *opts, "--", *paths], prog_name="kvlint-hook")


INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C stopped


class _Interrupted(BaseException):
    """Ctrl-C, raised by the SIGINT handler instead of KeyboardInterrupt: click turns that one into
    "Aborted!" and exit 1 (the "findings" code), and a traceback is printed anywhere else."""


def _on_sigint(_signum: int, _frame: object) -> None:
    raise _Interrupted


# The cyclic garbage collector is paused while the command starts: start-up builds tens of
# thousands of objects that live as long as the process (modules, classes, catalog tables), and
# collecting them again and again cost about 5 % of a one-file run's CPU (benchmarks/speed.py).
# The linter resumes it, with those objects frozen out of every later collection, once the first
# file is linted (kvlint/run/lint.py _guarded); a command that lints nothing ends first.


def interruptible(run: Callable[[], None]) -> None:
    """Run a command; Ctrl-C ends it with one line on stderr and exit 130 (security review S21),
    in a single process, with -j (workers ignore SIGINT; the pool is ended) and with --fix."""
    import gc

    gc.disable()  # before anything is imported (see above)
    import contextlib
    import signal

    with contextlib.suppress(ValueError):  # not the main thread (an embedding program): its handling stays
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        run()
    except _Interrupted:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while unwinding changes nothing
        from kvlint.emit import say

        say("kvlint: interrupted")
        sys.exit(INTERRUPTED)


def main() -> None:
    interruptible(_main)


def _main() -> None:
    args = sys.argv[1:]
    if only_paths(args):
        from kvlint.app import run_check

        sys.exit(run_check(tuple(args), None, None, dict(DEFAULTS)))
    from kvlint.cli import main as command_line

    command_line()


if __name__ == "__main__":  # pragma: no cover
    main()
