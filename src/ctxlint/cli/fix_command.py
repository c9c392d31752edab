"""`ctxlint fix` (and `ctxlint check --fix` / `--diff`): the command-line side.

Registered by one call in main's parser set-up. Follows ruff: `--diff` prints a
unified diff, changes nothing and exits 1 when there is something to fix;
unsafe fixes need `--unsafe` (ruff's `--unsafe-fixes` is accepted too).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from ctxlint import session
from ctxlint.baseline.ratchet import compare, load_baseline
from ctxlint.cli import options
from ctxlint.core.errors import ConfigError
from ctxlint.core.shown_paths import opener
from ctxlint.discover.files import discover

UNSAFE_HELP = "also apply the fixes that can change behaviour (they say why, per site)"
DIFF_HELP = "print the fixes as a unified diff and change nothing (exit 1 when there is one)"


class _AsFix(argparse.Action):
    """`check --fix` / `check --diff`: run the fix command instead."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        namespace.command = "fix"
        if option == "--diff":
            namespace.diff = True


def add_parser(sub: Any, commands: dict[str, Callable[..., int]]) -> None:
    """`fix`, and `--fix`/`--diff`/`--unsafe` on `check` (registered before this)."""
    fix = sub.add_parser(
        "fix",
        help="rewrite what the rules report, where a rule has a fix",
        description=(
            "Rewrite what the rules report, where a rule has a fix. `ctxlint rules` "
            "shows which rules can fix (its fix column: safe, or unsafe: those run "
            "only with --unsafe); `ctxlint explain RULE` says what each rewrites."
        ),
    )
    options.add_common(fix)
    fix.add_argument("--diff", action="store_true", help=DIFF_HELP)
    fix.add_argument(
        "--unsafe", "--unsafe-fixes", dest="unsafe", action="store_true", help=UNSAFE_HELP
    )
    # as `check` has them, so `check --fix -q --exit-zero` and `fix -q --exit-zero` agree
    fix.add_argument(
        "--quiet", "-q", action="store_true", help="print the sites (or the diff), no summary"
    )
    fix.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when sites are left or a diff is printed (errors still exit 2)",
    )
    fix.add_argument(
        "--ignore-errors",
        action="store_true",
        help="files that fail to parse (never touched) do not make the run exit 2",
    )
    check = sub.choices["check"]
    check.add_argument(
        "--fix", action=_AsFix, nargs=0, help="fix what can be fixed (`ctxlint fix`)"
    )
    check.add_argument("--diff", action=_AsFix, nargs=0, help=f"{DIFF_HELP} (`ctxlint fix --diff`)")
    check.add_argument(
        "--unsafe",
        "--unsafe-fixes",
        dest="unsafe",
        action="store_true",
        help=f"{UNSAFE_HELP} (with --fix)",
    )
    commands["fix"] = cmd_fix


def cmd_fix(args: argparse.Namespace) -> int:
    # the fixers build LibCST trees: imported when a fix runs, not for every command
    from ctxlint.fix.plan import FIXED
    from ctxlint.fix.report import site_lines, summary, unified_diff, untouched
    from ctxlint.fix_run import FixRun, fixable
    from ctxlint.report.formats._common import report_base

    setup = options.resolve(args)
    config, filters = setup.config, setup.filters
    can = fixable(setup.rules)
    ids = {r.id for r in setup.selected if r.id in can}
    if not ids:
        raise ConfigError(
            "none of the selected rules has a fix (rules with one: " + ", ".join(sorted(can)) + ")"
        )
    if filters:
        files = discover(config.root, config.src, config.exclude)
        session.warn_unchecked(
            config,
            filters,
            files,
            lambda m: print(f"ctxlint: warning: {m}", file=sys.stderr),
            setup.exclude_options,
        )
    baseline = load_baseline(config.baseline) if config.baseline else None
    run = FixRun(
        setup,
        select=ids,
        unsafe=bool(getattr(args, "unsafe", False)),
        paths=lambda p: session.under(p, filters),
        pins=baseline.pins if baseline is not None else None,
    )
    result = run.run()
    assert result.output is not None
    shown = opener(str(config.root))  # as check prints paths: from the working folder
    session.say_disabled({k: v for k, v in result.output.disabled.items() if k in ids})
    quiet, exit_zero = getattr(args, "quiet", False), getattr(args, "exit_zero", False)
    # a file that does not parse is never touched; said even with -q, and exit 2
    # as `check` exits for it (--exit-zero does not hide it; --ignore-errors does)
    failed = 2 if result.errors and not getattr(args, "ignore_errors", False) else 0
    # new findings of the selected rules that have no fix, after it: they fail
    # `check`, so the fix does not say "0 left" and exit 0 over them (ruff's --fix)
    others = [
        f
        for f in result.output.findings
        if f.rule not in ids
        and f.rule in {r.id for r in setup.selected}
        and session.under(f.path, filters)
        and (baseline is None or f.fingerprint not in baseline.entries)
    ]
    if getattr(args, "diff", False):
        # paths as GitHub and `git apply` at the repository root take them
        sys.stdout.write(unified_diff(result, report_base(str(config.root)).prefix))
        for line in (
            [] if quiet else summary(result, applied=False, stale=None, others=others, shown=shown)
        ):
            print(line, file=sys.stderr)
        for line in untouched(result, shown):  # errors: said even with -q
            print(line, file=sys.stderr)
        # as ruff's --diff (--fix-only): the diff's exit, whatever is left over
        return failed or (0 if exit_zero else 1 if result.after else 0)
    run.write(result)
    for line in site_lines(result, applied=True, shown=shown):
        print(line)
    stale = None
    if baseline is not None:
        _, entries = compare(result.output.findings, baseline, rules=ids)
        stale = len(entries)
    update = options.update_command(args, config)
    for line in (
        []
        if quiet
        else summary(result, applied=True, stale=stale, others=others, update=update, shown=shown)
    ):
        print(line)
    for line in untouched(result, shown):
        print(line, file=sys.stderr)
    clean = all(s.status == FIXED for s in result.sites) and not others
    return failed or (0 if exit_zero or clean else 1)
