"""`ctxlint audit`: run the engine once (plus the history, if asked) and render."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from ctxlint.baseline.ratchet import compare, load_baseline
from ctxlint.core.console import make_console
from ctxlint.core.errors import ConfigError
from ctxlint.core.outfiles import write_text
from ctxlint.discover.files import discover
from ctxlint.engine.registry import load_rules
from ctxlint.report.audit.history import history
from ctxlint.report.audit.html import render_html
from ctxlint.report.audit.model import Audit, build_audit, folder_of
from ctxlint.report.audit.terminal import print_audit, render_terminal
from ctxlint.report.audit.trees import across_trees


def under(path: str, filters: list[str]) -> bool:
    return not filters or any(
        f in (".", "") or path == f or path.startswith(f.rstrip("/") + "/") for f in filters
    )


def collect(args: argparse.Namespace) -> Audit:
    from ctxlint.cli import main as cli  # cli imports this package: resolve it at call time

    if args.history < 0:
        raise ConfigError("--history N needs N >= 0")
    if args.trees and args.history:
        raise ConfigError("give --history or --trees, not both")
    if args.trees and not args.paths:
        args.paths = [args.trees[-1]]
    rules = load_rules()
    config, filters = cli.resolve_config(args, rules)
    selected = cli.selected_rules(args, config, rules)
    baseline = load_baseline(config.baseline) if config.baseline else None
    pins = baseline.pins if baseline is not None else None
    out = cli.run_engine(args, config, rules, selected, pins)
    ids = {r.id for r in selected} - set(out.disabled)  # a rule that could not run has no stale
    if baseline is not None:
        findings, stale = compare(out.findings, baseline, rules=ids)
    else:
        findings, stale = out.findings, []
    files = [f.rel for f in discover(config.root, config.src, config.exclude)]
    files = [p for p in files if under(p, filters)]
    baseline_path = None
    if config.baseline is not None:
        try:
            baseline_path = config.baseline.relative_to(config.root).as_posix()
        except ValueError:
            baseline_path = str(config.baseline)
    audit = build_audit(
        root=config.root.as_posix(),
        paths=filters,
        rules=[r.info() for r in selected],
        findings=[f for f in findings if under(f.path, filters)],
        stale=[s for s in stale if under(s.path, filters)],
        baseline=baseline,
        baseline_path=baseline_path,
        program=out.program,
        files_by_folder=dict(Counter(folder_of(p) for p in files)),
        files_checked=len(files),
        errors=[e.to_json() for e in out.errors if under(e.path, filters)],
    )
    if args.trees:
        audit.history = across_trees(
            config, rules, selected, [Path(t) for t in args.trees], jobs=args.jobs,
            use_cache=not args.no_cache,
        )  # fmt: skip
    if args.history:
        err = make_console(stderr=True, color=getattr(args, "color", "auto"))

        def progress(i: int, n: int, short: str) -> None:
            if err.is_terminal:
                err.print(f"history {i}/{n} {short}", markup=False)  # a commit subject

        audit.history = history(
            config,
            rules,
            selected,
            args.history,
            under=lambda p: under(p, filters),
            jobs=args.jobs,
            use_cache=not args.no_cache,
            pins=pins,
            progress=progress,
        )
    return audit


def cmd_audit(args: argparse.Namespace) -> int:
    """Exit 0 whatever the findings (an audit reports, `check` gates); 2 on errors."""
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
