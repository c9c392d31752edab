"""`ctxlint audit`: one session check (plus the history or the trees, if asked),
rendered by report.audit. The renderers are imported on use: building the
parser must not pay for them."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from ctxlint import session
from ctxlint.cli import options
from ctxlint.core.console import make_console
from ctxlint.core.errors import ConfigError
from ctxlint.core.outfiles import write_text

if TYPE_CHECKING:
    from ctxlint.report.audit.model import Audit


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("audit", help="where the tree stands: per rule, folder, set, commit")
    options.add_common(p)
    options.add_format(p, "the audit")
    p.add_argument(
        "--output",
        "--output-file",
        "-o",
        metavar="FILE",
        help="write the text or JSON report to FILE",
    )
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    p.add_argument(
        "--history",
        type=int,
        default=0,
        metavar="N",
        help="findings per rule over the last N commits touching the tree (burn-down)",
    )
    p.add_argument(
        "--trees",
        nargs="+",
        metavar="TREE",
        help="findings per rule across these trees (releases, oldest first), charted like "
        "--history; the audit itself is of PATH, or of the last TREE",
    )


def collect(args: argparse.Namespace) -> Audit:
    from ctxlint.report.audit.history import commits, history
    from ctxlint.report.audit.model import build_audit, folder_of
    from ctxlint.report.audit.trees import across_trees

    if args.history < 0:
        raise ConfigError("--history N needs N >= 0")
    if args.trees and args.history:
        raise ConfigError("give --history or --trees, not both")
    if args.trees and not args.paths:
        args.paths = [args.trees[-1]]
    setup = options.resolve(args, disabled=session.QUIET)
    config = setup.config
    if args.history:  # a tree outside git: say so before the check, not after it
        commits(config.root, 1)
    checked = options.check(args, setup)
    result = checked.result
    baseline_path = None
    if config.baseline is not None:
        try:
            baseline_path = config.baseline.relative_to(config.root).as_posix()
        except ValueError:
            baseline_path = str(config.baseline)
    audit = build_audit(
        root=config.root.as_posix(),
        paths=setup.filters,
        rules=[r.info() for r in setup.selected],
        findings=result.findings,
        stale=result.stale,
        baseline=checked.baseline,
        baseline_path=baseline_path,
        program=checked.out.program,
        files_by_folder=dict(Counter(folder_of(p) for p in checked.files)),
        files_checked=len(checked.files),
        errors=[e.to_json() for e in result.errors],
    )
    if args.trees:
        audit.history = across_trees(setup, [Path(t) for t in args.trees])
    if args.history:
        err = make_console(stderr=True, color=getattr(args, "color", "auto"))

        def progress(i: int, n: int, short: str) -> None:
            if err.is_terminal:
                err.print(f"history {i}/{n} {short}", markup=False)  # a commit subject

        audit.history = history(
            setup,
            args.history,
            pins=checked.baseline.pins if checked.baseline is not None else None,
            progress=progress,
        )
    return audit


def cmd_audit(args: argparse.Namespace) -> int:
    """Exit 0 whatever the findings (an audit reports, `check` gates); 2 on errors."""
    from ctxlint.report.audit.html import render_html
    from ctxlint.report.audit.terminal import print_audit, render_terminal

    audit = collect(args)
    if args.html:
        write_text(args.html, render_html(audit), "the audit page")
    if args.format == "json":
        text = json.dumps(audit.to_json(), indent=2, ensure_ascii=False) + "\n"
    elif args.output:
        text = render_terminal(audit)
    else:
        color = getattr(args, "color", "auto")
        print_audit(audit, make_console(color=color))
        if args.html:
            make_console(stderr=True, color=color).print(f"HTML report: {args.html}", markup=False)
        return 0
    if args.output:
        write_text(args.output, text, "the audit")
    else:
        sys.stdout.write(text)
    return 0
