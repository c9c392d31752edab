"""`python -m ctxlint.cli`."""

from ctxlint.cli.entry import run

run()
