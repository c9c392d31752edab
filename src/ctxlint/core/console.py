"""The one place a rich console is made: width, colour and terminal detection.

Text that is not going to a terminal (a pipe, `-o FILE`, pre-commit, CI logs) is
read by greps, editors and log viewers, which wrap for themselves: a console
that hard-wrapped it at rich's 80-column default would split source lines in
code frames and truncate tables. So such a console is as wide as `COLUMNS`
says, or wide enough never to wrap. Colour follows ruff: `--color
auto|always|never`, where auto honours NO_COLOR and FORCE_COLOR
(https://no-color.org, https://force-color.org) and otherwise colours a terminal.
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

COLOR_CHOICES = ("auto", "always", "never")
# The width of a console that is not a terminal and has no COLUMNS: no line of
# a report comes near it, so nothing is wrapped or cut.
UNWRAPPED = 10_000


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or exotic stream
        return False


def columns() -> int | None:
    """COLUMNS as a width, when it holds a positive whole number."""
    raw = os.environ.get("COLUMNS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


def wants_color(color: str, stream: IO[str]) -> bool:
    """Whether to style output at all (colour, bold and dim alike)."""
    if color == "always":
        return True
    if color == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return _isatty(stream)


def report_width(stream: IO[str] | None) -> int | None:
    """COLUMNS if set; else the terminal's own width (None: rich asks it); else unwrapped."""
    width = columns()
    if width is not None:
        return width
    return None if stream is not None and _isatty(stream) else UNWRAPPED


def make_console(
    *, stderr: bool = False, color: str = "auto", file: IO[str] | None = None
) -> Console:
    """A console for `file` (default stdout, or stderr): styled only when
    `wants_color`, wrapped only at a terminal's (or COLUMNS') width."""
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    styled = wants_color(color, stream)
    return _console_class()(
        file=stream,
        width=report_width(stream),
        # color_system=None drops every style, bold and dim included (rich's own
        # no_color keeps them, which NO_COLOR users do not want).
        color_system="auto" if styled else None,
        force_terminal=True if styled and not _isatty(stream) else None,
        highlight=False,
    )


def _console_class() -> type[Console]:
    """rich's Console, but a reader that closed the pipe (`ctxlint audit | head`)
    raises BrokenPipeError, which the command line answers for every command
    alike (cli.main: exit 141), where rich would exit 1 itself."""
    from rich.console import Console

    class PipedConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return PipedConsole


def plain_console(file: IO[str]) -> Console:
    """An unstyled, unwrapped console for reports written to a file or string
    (a file is no terminal: COLUMNS, a terminal's width, does not apply)."""
    from rich.console import Console

    return Console(
        file=file,
        width=UNWRAPPED,
        color_system=None,
        force_terminal=False,
        highlight=False,
    )


__all__ = ["COLOR_CHOICES", "make_console", "plain_console", "report_width", "wants_color"]
