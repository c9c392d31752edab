"""A check's request to a project's daemon, as both clients make it: the full
command line (cli.daemon_checks.ask, its parsed options) and the quick one
(cli.quick_check, its command line as typed). Light: the standard library
and the code version only."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from ctxlint import __version__
from ctxlint.engine.keys import CODE_VERSION


def client_message(**what: Any) -> dict[str, Any]:
    """The request: `what` (args= the parsed options, or argv= the command
    line), with this process's version, folder, environment and terminal."""
    return {
        "op": "check",
        "version": __version__,
        "code": CODE_VERSION,
        **what,
        "cwd": os.getcwd(),
        "env": _environment(),
        "tty": _isatty(sys.stdout),
    }


def _environment() -> dict[str, str]:
    """This process's environment, with the terminal's width when the report
    goes to one (the daemon has no terminal to ask)."""
    env = dict(os.environ)
    if _isatty(sys.stdout) and not env.get("COLUMNS"):
        env["COLUMNS"] = str(shutil.get_terminal_size().columns)
    return env


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
