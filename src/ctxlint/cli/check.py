"""`ctxlint check`: the session's Result, rendered in the chosen format."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ctxlint import session
from ctxlint.cli import arguments, daemon_checks, options
from ctxlint.core.errors import ConfigError
from ctxlint.core.findings import Result
from ctxlint.core.outfiles import check_writable, write_text
from ctxlint.report.formats import print_text, print_timings, render
from ctxlint.report.formats._common import moved_findings, moved_hint, name_update_command


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    check = sub.add_parser("check", help="check the tree against the rules and the baseline")
    arguments.add_check(check)


def cmd_check(args: argparse.Namespace) -> int:
    setup = options.resolve(args)
    answered = daemon_checks.ask(args, setup)  # a daemon for this project answers the same
    if answered is not None:
        return answered
    return report(args, setup)


def report(
    args: argparse.Namespace,
    setup: session.Setup,
    seen: Callable[[session.Checked], None] | None = None,
) -> int:
    """The check of a resolved setup, rendered: the exit code. `seen` is told
    the check before it is rendered (a daemon answers a report it made already:
    cli.daemon_checks.LastAnswers)."""
    if args.output:
        check_writable(args.output, "the report")
    checked = options.check(args, setup)
    if seen is not None:
        seen(checked)
    result = checked.result
    result.strict = args.strict  # stale entries fail too: the command's exit, not the run's
    result.update_command = options.update_command(args, setup.config)
    if args.format != "json":  # JSON, as its paths, is the same from every folder
        name_update_command(result)
    shown = format_options(args)
    if args.output:
        text = render(result, args.format, **shown)
        write_text(args.output, text, "the report")
    elif args.format == "text":
        print_text(result, options.console(color=args.color), **shown)
    else:
        sys.stdout.write(render(result, args.format, **shown))
    if args.timings:
        print_timings(result, options.console(stderr=True, color=args.color))
    hint = stale_hint(result, strict=args.strict) if result.stale else ""
    if hint and args.format == "text" and not args.quiet:
        options.console(stderr=True, color=args.color).print(hint, markup=False)
    code = result.exit_code(ignore_errors=args.ignore_errors)
    return 0 if code == 1 and args.exit_zero else code


def stale_hint(result: Result, *, strict: bool) -> str:
    """What to do about stale entries (fixed ones fail only under --strict). A stale
    entry whose rule, scope and source reappear as a new finding was moved (a
    renamed file), not fixed: `baseline update` alone would drop it and refuse the
    new one, so that case says what works."""
    moved = moved_findings(result)
    fixed = len(result.stale) - moved
    parts = []
    if fixed and strict:
        entries = f"{fixed} stale baseline entr{'y' if fixed == 1 else 'ies'}"
        new = len(result.new_findings)
        if new:  # not "the code got better": the same run found worse
            parts.append(
                f"{entries}: fixed findings, beside {new} new one{'' if new == 1 else 's'}; "
                f"`{result.update_command}` drops the entries and does not accept the new findings"
            )
        else:
            parts.append(
                f"{entries}: the code got better; run `{result.update_command}` to lock it in"
            )
    if moved:
        parts.append(
            f"{moved} baselined finding{'' if moved == 1 else 's'} moved to another file "
            f"(a rename?): the baseline pins each finding's path, so after review run {moved_hint(result)}"
        )
    return "; ".join(parts)


# The switches each output format understands (others reject them, never drop them).
_FORMAT_OPTIONS = {
    "text": ("quiet", "statistics", "show_details"),
    "concise": ("quiet",),
    "json": ("statistics",),
}


def format_options(args: argparse.Namespace) -> dict[str, bool]:
    known = _FORMAT_OPTIONS.get(args.format, ())
    if args.statistics and "statistics" not in known:
        raise ConfigError(f"--statistics works with --format text or json, not {args.format}")
    if args.show_details and "show_details" not in known:
        raise ConfigError(
            f"--show-details works with --format text, not {args.format} "
            "(the JSON always holds a finding's details)"
        )
    return {k: bool(getattr(args, k)) for k in known}
