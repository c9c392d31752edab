"""Command line: check, baseline update|show, rules, explain (rule), sets, show-settings,
audit, fix, roles, clean, server.

Exit codes: 0 clean, 1 findings or a baseline regression (0 with --exit-zero),
2 usage, config or tool error (one line on stderr, never a traceback).
Options and output follow ruff where they fit (docs/command-line.md). Each
command lives in its own module; every one that checks a tree runs the one
check sequence in ctxlint.session.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from ctxlint import __version__
from ctxlint.baseline.ratchet import BaselineError
from ctxlint.cli import (
    audit,
    baseline,
    catalogue,
    check,
    clean_command,
    fix_command,
    options,
    roles_command,
    server_command,
)
from ctxlint.cli.entry import PIPE_CLOSED, _cannot_write, _unwritable, run
from ctxlint.core.errors import CtxlintError


def build_parser() -> argparse.ArgumentParser:
    parser = options.Parser(
        prog="ctxlint", description="Keep a runtime-context design true: derived sets, exact pins."
    )
    parser.add_argument("--version", action="version", version=f"ctxlint {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=options.IntermixedParser
    )
    check.add_parser(sub)
    baseline.add_parser(sub)
    catalogue.add_parsers(sub)
    audit.add_parser(sub)
    fix_command.add_parser(sub, COMMANDS)
    roles_command.add_parser(sub, COMMANDS)
    clean_command.add_parser(sub, COMMANDS)
    server_command.add_parser(sub, COMMANDS)
    return parser


COMMANDS = {
    "show-settings": catalogue.cmd_show_settings,
    "check": check.cmd_check,
    "baseline": baseline.cmd_baseline,
    "rules": catalogue.cmd_rules,
    "explain": catalogue.cmd_explain,
    "rule": catalogue.cmd_explain,  # ruff's name for it
    "sets": catalogue.cmd_sets,
    "audit": audit.cmd_audit,
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    if not argv:  # as ruff: the help, on stderr, and the usage error's exit
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        print(
            f"ctxlint: error: --jobs must be 1 or more worker processes, not {jobs}",
            file=sys.stderr,
        )
        return 2
    return guarded(lambda: COMMANDS[args.command](args))


def guarded(command: Callable[[], int]) -> int:
    """A command's exit code, its errors said as main says them: one line, exit 2."""
    try:
        return command()
    except (CtxlintError, BaselineError) as exc:
        print(f"ctxlint: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ctxlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `ctxlint check | head`: see PIPE_CLOSED
        return PIPE_CLOSED
    except Exception as exc:  # a bug in ctxlint: one line, unless asked for more
        if _unwritable(exc):  # not a bug: the output has nowhere to go (/dev/full)
            print(f"ctxlint: error: {_cannot_write(exc)}", file=sys.stderr)
            return 2
        if os.environ.get("CTXLINT_DEBUG"):
            raise
        print(
            f"ctxlint: internal error: {type(exc).__name__}: {exc} "
            "(rerun with CTXLINT_DEBUG=1 for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    run()

__all__ = ["build_parser", "main", "run"]
