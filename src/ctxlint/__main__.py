"""`python -m ctxlint`: the same entry point as the `ctxlint` command."""

from ctxlint.cli.entry import run

run()
