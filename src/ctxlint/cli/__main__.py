"""`python -m ctxlint.cli`."""

from ctxlint.cli.main import run

run()
