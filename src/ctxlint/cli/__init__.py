"""The command line and the other front ends (the pytest plugin)."""

from ctxlint.cli.main import run

__all__ = ["run"]
