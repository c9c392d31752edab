"""The `ctxlint` command's process: its exit, its streams, and a check a
running daemon answers before the command line (cli.main) is even imported
(cli.quick_check).

Nothing here imports more than the standard library at import time: the
installed command and `python -m ctxlint` start here."""

from __future__ import annotations

import errno
import gc
import os
import sys
from typing import Any

# The reader closed the pipe before the output ended (`ctxlint check | head`):
# the exit a process killed by SIGPIPE gives (as git or grep in that pipe), never
# 0, which under `set -o pipefail` would pass a check whose findings were cut off.
PIPE_CLOSED = 141


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
        code = _quick(sys.argv[1:])
        if code is None:  # (no daemon answered: the command line, in this process)
            from ctxlint.cli.main import main

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


def _quick(argv: list[str]) -> int | None:
    """A running daemon's answer to `ctxlint check ...` (cli.quick_check); None
    when the full command line must run (a fault of the quick client too:
    the full command line then says what is wrong, or answers)."""
    try:
        from ctxlint.cli.quick_check import answer

        found = answer(argv)
    except Exception:
        return None
    if found is None:
        return None
    sys.stdout.write(found[1])
    sys.stderr.write(found[2])
    return found[0]
