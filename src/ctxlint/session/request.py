"""What a front end asks the session for, as one object: which tree, config and
rules, how the engine runs, and what the check reports.

A front end (the command line, the pytest plugin, a language server) parses
its own arguments into a `Request`; `session.resolve` turns it into a `Setup`
and `session.check` runs it. Each part groups the options that mean one thing,
so that a front end names only what it changes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxlint.engine.run import Progress

if TYPE_CHECKING:
    from ctxlint.session.runs import Resident

# What to do about selected rules this codebase cannot run (a vocabulary set is missing):
REFUSE = "refuse"  # say so, and fail when one was named or none can run (check, baseline)
SAY = "say"  # say so (sets)
QUIET = "quiet"  # leave it to the front end (audit, pytest, history, trees)

PYTEST = "pytest --ctxlint"  # Request.command of the pytest plugin: its options in advice


def stderr_warning(message: str) -> None:
    print(f"ctxlint: warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class Selection:
    """Which rules count, as ruff's --select, --ignore and --extend-select name
    them (ids, id prefixes, names, ALL); empty: the config's select or ignore."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend: tuple[str, ...] = ()  # added to the select in force


@dataclass(frozen=True)
class Overrides:
    """Config keys the command line gives in place of the config's."""

    baseline: str | None = None  # the baseline file
    cache_dir: str | None = None  # the fact cache folder
    exclude: tuple[str, ...] | None = None  # replaces the config's exclude (ruff's --exclude)
    extend_exclude: tuple[str, ...] = ()  # added to the exclude in force (--extend-exclude)
    target_version: str | None = None  # the grammar, pyXY


@dataclass(frozen=True)
class RunOptions:
    """How the engine runs: the findings are the same whatever these are."""

    jobs: int | None = None  # worker processes (None: one per core)
    use_cache: bool = True
    time_rules: bool = False  # --timings: charge each visitor, derive and check to its rule
    progress: Progress | None = None  # (done, total, phase)
    # a resident front end's (server, daemon): each run starts where the last ended
    resident: Resident | None = None


@dataclass(frozen=True)
class Report:
    """What the check makes of the run: which findings it reports, what it says."""

    changed_since: str | None = None  # only files changed since this git ref
    staged: bool = False  # only files git's index holds (what a commit holds)
    baseline: bool = True  # compare with the baseline (False: `sets`, `roles` load none)
    disabled: str = REFUSE  # selected rules that cannot run: REFUSE, SAY or QUIET
    # each warning ("... is partial", "... not checked"); None drops them
    warn: Callable[[str], None] | None = stderr_warning


@dataclass(frozen=True)
class Request:
    """Which tree, config and rules a front end asks for, and how to run them."""

    # PATHs as the command line gives them: the tree to check first when a config
    # file or profile is given, then (or else) the paths to report on
    paths: tuple[str, ...] = ()
    config: str | None = None  # a config file (pyproject.toml or ctxlint.toml)
    profile: str | None = None  # a built-in config (config/profiles/NAME.toml)
    root: str | None = None  # the tree to check, given apart from PATHs (pytest's --ctxlint-root)
    search_from: str | None = None  # where to look for a config (default: first PATH, else cwd)
    # the command asked for, in advice ("check", "baseline update"; PYTEST)
    command: str = "check"
    rules: Selection = field(default_factory=Selection)
    overrides: Overrides = field(default_factory=Overrides)
    run: RunOptions = field(default_factory=RunOptions)
    report: Report = field(default_factory=Report)
