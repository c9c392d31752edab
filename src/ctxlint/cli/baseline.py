"""`ctxlint baseline update|show`: the ratchet's file, from the session's run."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from typing import Any

from ctxlint.baseline.ratchet import BaselineOverview, load_baseline, show, update
from ctxlint.cli import options
from ctxlint.config.settings import Config
from ctxlint.core.errors import ConfigError, CtxlintError
from ctxlint.core.findings import PIN
from ctxlint.core.outfiles import check_writable
from ctxlint.discover.roots import shown


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    base = sub.add_parser("baseline", help="update or show the pinned baseline")
    bsub = base.add_subparsers(dest="action", required=True)
    upd = bsub.add_parser(
        "update", help="drop entries no longer found (growth needs --allow-growth)"
    )
    options.add_common(upd)
    upd.add_argument("--allow-growth", action="store_true", help="also pin new findings")
    upd.add_argument("--reason", help="why the baseline grows (stored with the new entries)")
    shw = bsub.add_parser("show", help="print the baseline's entries and counts")
    options.add_common(shw)
    options.add_format(shw, "the entries and counts")


def _whole_tree(args: argparse.Namespace, config: Config) -> str:
    """How to name the whole tree instead of a PATH inside it."""
    cfg = config.config_path
    if args.config or args.profile or cfg is None:
        return "drop the PATH arguments after the tree"
    if cfg.parent == config.root:
        return f"give the project's folder ({shown(config.root)}) instead of a PATH inside it"
    return f"give --config {shown(cfg)} instead of a PATH"


def overview_json(overview: BaselineOverview) -> dict[str, Any]:
    """`baseline show --format json`: the text's counts and entries (paths from
    the project root, as in the baseline file and `check`'s JSON)."""
    return {
        "total": overview.total,
        "per_rule": overview.per_rule,
        "per_path": overview.per_path,
        "entries": [e.to_json() for e in overview.entries],
        "pin_keys_per_rule": {rule: len(keys) for rule, keys in sorted(overview.pins.items())},
    }


def cmd_baseline(args: argparse.Namespace) -> int:
    if args.action == "update" and args.reason is not None and not args.allow_growth:
        # it would be dropped without a word: a reason is stored only with what growth pins
        raise ConfigError(
            "--reason goes with --allow-growth: it is stored with the new findings that pins"
        )
    setup = options.resolve(args)
    config = setup.config
    # a PATH naming the project's root (how its config is found from outside) is the whole tree
    if any(f not in (".", "") for f in setup.filters) and args.action == "update":
        raise ConfigError(
            f"baseline update works on the whole tree: {_whole_tree(args, config)} "
            "(--allow-growth would otherwise pin findings outside the PATHs)"
        )
    if config.baseline is None:
        raise ConfigError("no baseline file configured")
    console = options.console(color=args.color)
    if args.action == "show":
        overview = show(load_baseline(config.baseline))
        if getattr(args, "format", "text") == "json":
            sys.stdout.write(json.dumps(overview_json(overview), indent=2) + "\n")
        else:
            console.print(overview.to_text(), markup=False, highlight=False)
        return 0
    if args.allow_growth and not (args.reason or "").strip():
        raise ConfigError('--allow-growth needs --reason "why these findings are accepted"')
    check_writable(config.baseline, "baseline", make_folders=True)  # before the run
    checked = options.check(args, setup)
    old, out = checked.baseline, checked.out
    assert old is not None  # config.baseline is set, so the session loaded it
    if out.errors:
        for e in out.errors:
            options.console(stderr=True, color=args.color).print(
                f"{e.path}: {e.message}", markup=False
            )
        raise CtxlintError("files failed to parse; fix them before updating the baseline")
    ids = {r.id for r in setup.selected} - set(out.disabled)
    # Pins are acknowledged, not ratcheted: updating records what the code
    # derives now, and the change shows up as a reviewed baseline diff.
    pins = {k: v for k, v in old.pins.items() if k not in ids} | out.pins
    findings = [f for f in out.findings if f.kind != PIN]
    new, report = update(
        old,
        findings,
        allow_growth=args.allow_growth,
        reason=args.reason,
        rules=ids,
        pins=pins,
    )
    if report.changed or not config.baseline.exists():
        new.save(config.baseline)
    rel = os.path.relpath(config.baseline)
    said = f"{rel}: removed {len(report.removed)}, added {len(report.added)}, kept {report.kept}"
    if report.pins:  # what the derived sets pin moved too: say it, it is the reviewed diff
        p = report.pins
        moved = [
            f"{len(v)} {k}"
            for k, v in (("added", p.added), ("changed", p.changed), ("removed", p.removed))
            if v
        ]
        # by rule, as check counts the pin changes it reports (one per key)
        by_rule = Counter(rule for rule, _ in p.added + p.changed + p.removed)
        said += f"; pins: {', '.join(moved)} ({', '.join(f'{r} {n}' for r, n in sorted(by_rule.items()))})"
    console.print(said, markup=False)
    if report.left_out:
        n = len(report.left_out)
        command = options.update_command(args, config)
        it = "it" if n == 1 else "them"
        console.print(
            f"{n} new finding{'' if n == 1 else 's'} {'was' if n == 1 else 'were'} NOT added: "
            f'fix {it}, or accept {it} with `{command} --allow-growth --reason "..."`',
            markup=False,
        )
        return 1
    return 0
