"""The `kvlint` command's entry point.

`kvlint FILE…` with nothing but paths — how pre-commit calls a hook, many times a day — goes
straight to the linter with every option at its default; anything else (an option, a subcommand,
`-` for stdin, no argument at all) goes through the click command line in cli.py. Importing click
costs about 25 ms (it brings inspect, uuid and datetime), a fifth of a one-file run, so the common
call skips it. tests/test_cli.py checks that DEFAULTS is exactly what click would pass.
"""

from __future__ import annotations

import sys

COMMANDS = ("check", "rules", "explain", "plan", "config")

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
    "no_inline_suppressions": False,
    "exclude": (),
    "no_gitignore": False,
    "stdin_filename": None,
    "config_path": None,
    "isolated": False,
    "color": None,
    "max_file_size": None,
    "jobs": 1,
    "exit_zero": False,
}


def only_paths(args: list[str]) -> bool:
    return bool(args) and not any(a.startswith("-") or a in COMMANDS for a in args)


def main() -> None:
    args = sys.argv[1:]
    if only_paths(args):
        from kvlint.app import run_check

        sys.exit(run_check(tuple(args), None, None, dict(DEFAULTS)))
    from kvlint.cli import main as command_line

    command_line()


if __name__ == "__main__":  # pragma: no cover
    main()
