"""`ctxlint check` answered by a running daemon, before the linter is imported.

A check through a daemon spent most of its time in its own process: Python's
start, the imports of every command and every rule, and the resolve of its
setup, only to find the socket and send the daemon what it parsed. Here the
check's own options are parsed (cli.arguments: the same definitions), the
config file and its cache folder found (discover.project: the same code as the
session's resolve, less the rules), and the daemon is sent the command line
itself; it parses and resolves it (in the client's folder and environment),
says what that said, and answers with the batch run's output and exit code.

Anything out of the ordinary answers None, and the full command line runs in
this process, which asks the daemon again or runs the check here: no daemon,
a parse it would refuse (a usage error, --help, an abbreviated option), a
config that cannot be read, --no-cache or CTXLINT_NO_SERVER, a socket that
is not this user's (the full path says so), a daemon of another version.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ctxlint.cli.arguments import IntermixedParser, add_check
from ctxlint.cli.daemon_message import client_message
from ctxlint.core.errors import CtxlintError
from ctxlint.discover.project import cache_folder, config_file
from ctxlint.server import client


class _Unusual(Exception):
    """What the full command line says better (a usage error, a help)."""


class _Parser(IntermixedParser):
    def error(self, message: str) -> Any:
        raise _Unusual(message)

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        raise _Unusual(message)

    def _print_message(self, message: str, file: Any = None) -> None:
        raise _Unusual(message)


def parsed(argv: list[str]) -> argparse.Namespace | None:
    """`check`'s options as the full parser would give them (None: ask it)."""
    if argv[:1] != ["check"]:
        return None
    parser = _Parser(prog="ctxlint check", add_help=False, allow_abbrev=False)
    add_check(parser)
    try:
        args = parser.parse_args(argv[1:])
    except _Unusual:
        return None
    args.command = "check"
    return args


def socket_folder(args: argparse.Namespace) -> Any:
    """The cache folder of the project the options name (None: none found)."""
    try:
        cfg_path, tree, _ = config_file(args.paths, config=args.config, profile=args.profile)
        return cache_folder(cfg_path, tree, args.cache_dir)
    except (CtxlintError, OSError, ValueError):
        return None


def answer(argv: list[str]) -> tuple[int, str, str] | None:
    """The daemon's answer to `ctxlint check ...`: its exit code, standard
    output and standard error; None when the full command line must run."""
    if os.environ.get("CTXLINT_NO_SERVER"):
        return None
    args = parsed(argv)
    if args is None or args.no_cache:
        return None
    folder = socket_folder(args)
    if folder is None:
        return None
    try:
        found = client.ask(folder, client_message(argv=argv))
    except client.NotOurs:
        return None  # (the full command line says why it does not use it)
    if found is None or not isinstance(found.get("code"), int):
        return None
    return int(found["code"]), str(found.get("stdout", "")), str(found.get("stderr", ""))
