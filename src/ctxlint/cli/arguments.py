"""The command line's options, with nothing else imported: `ctxlint check`
parses its own (add_check) to find a running daemon before it imports the
linter (cli.quick_check), and every command takes the common ones."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ctxlint.core.console import COLOR_CHOICES
from ctxlint.core.pysource import DEFAULT_TARGET, TARGET_VERSIONS
from ctxlint.report.formats import FORMATS


class Parser(argparse.ArgumentParser):
    """argparse, except that help or a version that cannot be written (stdout
    on a full disk) raises, so the command exits 2 saying so (argparse drops
    the error and exits 0), and a usage error is one line on stderr."""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            (file or sys.stderr).write(message)

    def error(self, message: str) -> Any:
        """A usage error in one line, as every other error is (argparse would
        print the whole usage above it): what is wrong, and where the options are."""
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)\n")


class IntermixedParser(Parser):
    """A command's parser that takes its PATHs before, between or after its
    options, as ruff does (`check python --select CTX101 python/x.py`): plain
    argparse stops filling a `nargs="*"` positional at the first option and
    refuses the rest. A parser with subcommands of its own (`baseline`) parses
    as argparse does; its subcommands are parsers of this class again."""

    _intermixing = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._intermixing or self._subparsers is not None:
            return super().parse_known_args(args, namespace)
        self._intermixing = True  # parse_known_intermixed_args calls back here (3.11)
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def rule_csv(value: str) -> list[str]:
    """A comma-separated list of rule selectors, at least one: an empty
    `--select ''` would otherwise fall back to every rule, unnoticed."""
    found = csv(value)
    if not found:
        raise argparse.ArgumentTypeError(
            f"{value!r} names no rule: give rule ids, id prefixes (CTX1), names or ALL"
        )
    return found


def add_color(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="style the output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), "
        "always or never",
    )


def add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", help="tree to check (with --config) or paths to report on")
    p.add_argument("--config", metavar="FILE", help="config file (pyproject.toml or ctxlint.toml)")
    p.add_argument(
        "--profile",
        metavar="NAME",
        help="a built-in config (e.g. sglang); PATH is the tree to check",
    )
    p.add_argument(
        "--select",
        type=rule_csv,
        metavar="RULE,...",
        help="only these rules, comma separated: ids, id prefixes (CTX1), names (seed-read), ALL",
    )
    p.add_argument(
        "--extend-select",
        type=rule_csv,
        metavar="RULE,...",
        help="add these rules to the select (the command line's or the config's)",
    )
    p.add_argument(
        "--ignore", type=rule_csv, metavar="RULE,...", help="skip these rules (as --select)"
    )
    p.add_argument(
        "--exclude",
        type=csv,
        metavar="PATTERN,...",
        help="files to leave out, gitignore-style from the project root (replaces the config's)",
    )
    p.add_argument(
        "--extend-exclude",
        type=csv,
        metavar="PATTERN,...",
        help="files to leave out besides the exclude in force (the command line's or the config's)",
    )
    p.add_argument(
        "--target-version",
        choices=tuple(TARGET_VERSIONS),
        metavar="VERSION",
        help="the Python grammar the code is parsed with, as ruff names it: "
        f"{', '.join(TARGET_VERSIONS)} (default: from config, else {DEFAULT_TARGET})",
    )
    p.add_argument("--baseline", metavar="FILE", help="baseline file (default: from config)")
    p.add_argument("--cache-dir", metavar="DIR", help="fact cache folder (default: from config)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the fact cache")
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (default: cores)",
    )
    add_color(p)


def add_check(p: argparse.ArgumentParser) -> None:
    """`ctxlint check`'s options: the common ones and the report's."""
    add_common(p)
    p.add_argument(
        "--output-format",
        "--format",
        dest="format",
        choices=FORMATS,
        default="text",
        metavar="FORMAT",
        help="text (findings with code frames; the default), concise (path:line:col: RULE "
        "message), json, sarif, github or junit",
    )
    p.add_argument(
        "--output", "--output-file", "-o", metavar="FILE", help="write the report to FILE"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="print the findings, nothing else")
    p.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when there are findings (files that fail to parse still exit 2)",
    )
    p.add_argument(
        "--show-details",
        action="store_true",
        help="after each finding's message, the detail its rule gives (e.g. CTX501's)",
    )
    p.add_argument("--strict", action="store_true", help="stale baseline entries fail too (CI)")
    p.add_argument(
        "--statistics",
        action="store_true",
        help="counts per rule instead of findings (text), or added to the JSON",
    )
    p.add_argument("--timings", action="store_true", help="time per phase and per rule")
    p.add_argument(
        "--ignore-errors", action="store_true", help="files that fail to parse do not fail the run"
    )
    p.add_argument(
        "--changed-since",
        metavar="REF",
        help="report only findings in files changed since git REF (the derivations see the whole tree)",
    )
    p.add_argument(
        "--staged",
        action="store_true",
        help="report only findings in files git's index holds, what a commit holds (the "
        "pre-commit hook): untracked files take part in the derivations but are not reported",
    )
