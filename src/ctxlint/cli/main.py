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
import errno
import gc
import os
import sys
from collections.abc import Callable
from typing import Any

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


# The reader closed the pipe before the output ended (`ctxlint check | head`):
# the exit a process killed by SIGPIPE gives (as git or grep in that pipe), never
# 0, which under `set -o pipefail` would pass a check whose findings were cut off.
PIPE_CLOSED = 141


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


def run() -> None:
    """The `ctxlint` command: `main()`, then exit without tearing the heap down.

    A run can hold millions of small objects (facts, the call graph); freeing
    them one by one at interpreter exit takes seconds and buys nothing, so
    the process ends right after its output is flushed (as mypy does). For
    the same reason the cyclic GC stays off for the whole command, not just
    the engine's run: switched back on, its first collections traverse every
    object the run still holds (1.2 s of a 6 s edited run on sglang) only to
    find the few cycles a process about to end would drop anyway.
    """
    gc.disable()
    closed = closed_stream()
    if closed is not None:
        said, other = closed
        if other is not None:
            other.write(f"ctxlint: error: {said}\n")
            _flush(other)
        os._exit(2)
    try:
        code = main()
    except SystemExit as exc:  # argparse: --help, --version, a usage error
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    except OSError as exc:  # argparse's help or version could not be written
        if not _unwritable(exc):
            raise
        sys.stderr.write(f"ctxlint: error: {_cannot_write(exc)}\n")
        code = 2
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # `ctxlint check | head`: see PIPE_CLOSED
        code = PIPE_CLOSED
    except (OSError, ValueError) as exc:  # the report did not get out (/dev/full)
        if code != 2:  # (a 2 has said its line already)
            sys.stderr.write(f"ctxlint: error: {_cannot_write(exc)}\n")
            code = 2
    _flush(sys.stderr)
    os._exit(code)


# errno values of a write that cannot succeed: a full disk or quota, a file too
# large, an I/O error, a descriptor closed under the process
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF}


def _unwritable(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS


def _cannot_write(exc: BaseException) -> str:
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"cannot write the output ({why})"


def _flush(stream: Any) -> None:
    try:
        stream.flush()
    except (OSError, ValueError):  # nothing more can be said on it
        pass


def closed_stream() -> tuple[str, Any] | None:
    """A standard stream the command started without (`>&-`, `2>&-`): the one
    line to say, and the stream it can go to (None when both are closed).
    Python sets such a stream to None; a report or an error written there
    would vanish, or land on the other stream as if it were output."""
    if sys.stdout is None:
        return (
            "standard output is closed: nowhere to write the report "
            "(redirect it instead, e.g. >/dev/null)",
            sys.stderr,
        )
    if sys.stderr is None:
        return (
            "standard error is closed: nowhere to write warnings and errors "
            "(redirect it instead, e.g. 2>/dev/null)",
            sys.stdout,
        )
    return None


if __name__ == "__main__":
    run()

__all__ = ["build_parser", "main", "run"]
