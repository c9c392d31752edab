"""`ctxlint server`: the language server over stdio (ctxlint.server, docs/server.md),
or, with `--daemon start|status|stop|run`, the project held resident for the
command line (docs/daemon.md).

Registered by one call in main's parser set-up. Its config is found as
`check` finds it: from PATH, `--config` or `--profile` when given (a bad one
is a usage error, exit 2, before anything is served), else from the
workspace folder the editor opens (the daemon: from the working folder).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ctxlint.cli import options

DAEMON_ACTIONS = ("start", "status", "stop", "run")


def add_parser(sub: Any, commands: dict[str, Callable[..., int]]) -> None:
    server = sub.add_parser(
        "server",
        help="serve diagnostics and fixes to an editor (the language server protocol), "
        "or hold the project resident for `ctxlint check` (--daemon)",
    )
    options.add_common(server)
    server.add_argument(
        "--stdio", action="store_true", help="talk over stdin and stdout (the default and only way)"
    )
    server.add_argument(
        "--daemon",
        choices=DAEMON_ACTIONS,
        metavar="ACTION",
        help="start, status, stop: the daemon `ctxlint check` asks while it runs (a Unix "
        "socket in the cache folder); run: the daemon in the foreground",
    )
    server.add_argument(
        "--wait",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="with --daemon start: how long to wait for the first check (default 600)",
    )
    commands["server"] = cmd_server


def cmd_server(args: argparse.Namespace) -> int:
    if args.daemon is not None:
        from ctxlint.cli import daemon_command

        return daemon_command.run(args)
    from ctxlint.server.lsp import serve  # pygls only for this command

    request = options.request(args)
    if args.paths or args.config or args.profile:
        options.resolve(args)  # a bad config is a usage error now, not a silent server
    return serve(request, use_cache=not args.no_cache, jobs=args.jobs)
