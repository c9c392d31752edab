"""Option parsing every command shares: the common options, the Request they
make, the console, the progress bar, and one session check run under it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlint import session
from ctxlint.cli.arguments import (  # (re-exported: every command's parser takes them here)
    IntermixedParser,
    Parser,
    add_color,
    add_common,
    csv,
    rule_csv,
)
from ctxlint.config.settings import Config, find_config
from ctxlint.core.console import make_console
from ctxlint.discover.roots import shown

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["IntermixedParser", "Parser", "add_color", "add_common", "csv", "rule_csv"]


def add_format(p: argparse.ArgumentParser, what: str) -> None:
    """`--output-format` (or `--format`) text|json, named as `check` names it (and ruff)."""
    p.add_argument(
        "--output-format",
        "--format",
        dest="format",
        choices=("text", "json"),
        default="text",
        metavar="FORMAT",
        help=f"{what} as text (the default) or json",
    )


def request(args: argparse.Namespace, **report: Any) -> session.Request:
    """The session request the common options describe; `report` sets what the
    command makes of the run (session.Report: `baseline=False`, `disabled=SAY`)."""
    return session.Request(
        paths=tuple(args.paths),
        config=args.config,
        profile=getattr(args, "profile", None),
        command=_command(args),
        rules=session.Selection(
            select=tuple(getattr(args, "select", None) or ()),
            ignore=tuple(getattr(args, "ignore", None) or ()),
            extend=tuple(getattr(args, "extend_select", None) or ()),
        ),
        overrides=session.Overrides(
            baseline=getattr(args, "baseline", None),
            cache_dir=getattr(args, "cache_dir", None),
            exclude=tuple(args.exclude) if getattr(args, "exclude", None) is not None else None,
            extend_exclude=tuple(getattr(args, "extend_exclude", None) or ()),
            target_version=getattr(args, "target_version", None),
        ),
        run=session.RunOptions(
            jobs=getattr(args, "jobs", None),
            use_cache=not getattr(args, "no_cache", False),
            time_rules=getattr(args, "timings", False),
        ),
        report=session.Report(
            changed_since=getattr(args, "changed_since", None),
            staged=getattr(args, "staged", False),
            **report,
        ),
    )


def resolve(args: argparse.Namespace, **report: Any) -> session.Setup:
    return session.resolve(request(args, **report))


def _command(args: argparse.Namespace) -> str:
    """The command asked for, as typed after `ctxlint` ("check", "baseline update",
    "server --daemon status")."""
    if args.command == "baseline":
        return f"baseline {args.action}"
    if args.command == "server" and getattr(args, "daemon", None):
        return f"server --daemon {args.daemon}"
    return str(args.command)


def command_as_typed(
    config: Config, command: str, *, config_file: str | None = None, profile: str | None = None
) -> str:
    """`ctxlint COMMAND` reaching this run's project from the working folder: the
    --config (`config_file`) or --profile it was given, else the project's folder
    when its config is not the one found from here (a hook run from the
    repository's root), or that config when its root is elsewhere."""
    parts = ["ctxlint", command]
    here = Path.cwd().resolve()
    if config_file or profile:  # PATH is then the tree
        parts += ["--config", shown(Path(config_file))] if config_file else ["--profile", profile]
        root = Path(config.root).resolve()
        if root != here:
            parts.append(shown(root))
    elif config.config_path is not None:  # found from PATH: that PATH, unless found from here
        found = find_config(here)
        if found is None or found.resolve() != config.config_path.resolve():
            folder = config.config_path.parent
            if Path(config.root).resolve() == folder.resolve():
                parts.append(shown(folder))
            else:  # its `root` is elsewhere: the folder would be a PATH filter there
                parts += ["--config", shown(config.config_path)]
    return " ".join(parts)


def update_command(args: argparse.Namespace, config: Config) -> str:
    """`ctxlint baseline update` for this command line's project (command_as_typed)."""
    return command_as_typed(
        config, "baseline update", config_file=args.config, profile=getattr(args, "profile", None)
    )


def console(stderr: bool = False, color: str = "auto") -> Console:
    """A rich console (rich is imported when one is made: a warm machine-format run never draws)."""
    return make_console(stderr=stderr, color=color)


def progress_bar(args: argparse.Namespace) -> Any:
    """One progress bar on stderr, labelled by phase, when stderr is a terminal
    (and the run is not --quiet)."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return None, None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    err = console(stderr=True, color=getattr(args, "color", "auto"))
    if not err.is_terminal:
        return None, None

    bar = Progress(
        TextColumn("{task.description:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
    )
    task = bar.add_task("reading", total=None)

    def update(done: int, total: int, phase: str) -> None:
        bar.update(task, completed=done, total=total, description=phase)

    return bar, update


def check(args: argparse.Namespace, setup: session.Setup) -> session.Checked:
    """The session's check of the setup, under a progress bar on a terminal."""
    bar, callback = progress_bar(args)
    if bar is None:
        return session.check(setup)
    with bar:
        return session.check(setup.with_progress(callback))
