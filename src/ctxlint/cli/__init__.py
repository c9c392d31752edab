"""The command line and the other front ends (the pytest plugin)."""

from ctxlint.cli.entry import run

__all__ = ["run"]
