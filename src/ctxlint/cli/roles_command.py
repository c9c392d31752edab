"""`ctxlint roles`: the namespaces each process role reaches statically (CTX302's
derived sets), and with `--compare FILE` their agreement with the runtime's
record-mode audit.

Registered by one call in main's parser set-up. Exit codes: 0, or 1 when
`--compare` finds a pair observed at runtime that the static reach lacks (a
soundness gap in ctxlint); 2 on bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from ctxlint import session
from ctxlint.cli import options
from ctxlint.core.shown_paths import opener
from ctxlint.report.roles import Roles, compare, read_observed, render, to_json

RULE = "CTX302"


def add_parser(sub: Any, commands: dict[str, Callable[..., int]]) -> None:
    roles = sub.add_parser(
        "roles", help="the config namespaces each process role reaches, and --compare with a run"
    )
    options.add_common(roles)
    options.add_format(roles, "the roles")  # --output-format, as every command takes it
    roles.add_argument(
        "--compare",
        metavar="FILE",
        help="the runtime's record-mode output (a `role namespace` line per pair, tab or "
        "space separated): report pairs "
        "observed but not reached (exit 1), reached but not observed, and per restricted "
        "role the agreement with the role table",
    )
    commands["roles"] = cmd_roles


def cmd_roles(args: argparse.Namespace) -> int:
    observed = read_observed(args.compare) if args.compare else None  # bad input: before the run
    setup = options.resolve(args, baseline=False, disabled=session.SAY)
    out = options.check(args, setup).out
    if RULE in out.disabled:
        print(f"ctxlint: error: {RULE} cannot run: {out.disabled[RULE]}", file=sys.stderr)
        return 2
    roles = Roles.from_sets(out.program.sets.get(RULE, {}))
    comparison = compare(roles, observed) if observed is not None else None
    if args.format == "json":
        sys.stdout.write(json.dumps(to_json(roles, comparison), indent=2, sort_keys=True) + "\n")
    else:
        shown = opener(str(setup.config.root))  # entry locations, as they open from here
        render(options.console(color=args.color), roles, comparison, shown)
    return 1 if comparison is not None and comparison.gaps else 0
