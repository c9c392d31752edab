"""The error for a folder with no config above it, naming the configs below it.

pre-commit runs a hook from the repository root and CI jobs start there too, so
a project kept in a subfolder (`services/server/pyproject.toml`) is not found by
walking up. The error names the project folders git holds a config in (tracked,
or untracked and not ignored) and the PATH (or pre-commit `args:`) that would
check each one.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxlint.config.settings import CONFIG_FILES, has_table
from ctxlint.core.errors import ConfigError

_SHOWN = 3  # the configs named in the message; more are counted
# the files git tracks, and those it would add (untracked, not ignored)
_LISTED = ("ls-files", "-z", "--full-name", "--cached", "--others", "--exclude-standard")


def configs_below(start: Path) -> tuple[Path, list[Path]]:
    """The git work tree's root and the config files below `start` that hold a
    ctxlint table, nearest first: those git tracks and those it would add (not
    yet committed, not ignored: a project set up before its first commit);
    none outside a git work tree."""
    from ctxlint.core.gitcmd import run_git  # (an error's path: not the daemon client's)

    patterns = [f":(glob)**/{name}" for name in CONFIG_FILES]
    try:
        done = run_git(start, *_LISTED, "--", *patterns)
        top = run_git(start, "rev-parse", "--show-toplevel")
    except OSError:  # no git: nothing to name
        return start, []
    if done.returncode != 0 or top.returncode != 0:
        return start, []
    root = Path(os.fsdecode(top.stdout.strip()))
    found = []
    for item in os.fsdecode(done.stdout).split("\0"):
        path = root / item
        if item and path.is_file() and path.resolve().is_relative_to(start) and has_table(path):
            found.append(path.resolve())
    return root.resolve(), sorted(found, key=lambda p: (len(p.parts), p))


def missing_config(
    start: Path, command: str = "check", *, pytest_plugin: bool = False
) -> ConfigError:
    """No config at or above `start`: say how to add one, or which folder below has
    one, in the options of the front end asking (the command line, or pytest's)."""
    option = "--ctxlint-config FILE" if pytest_plugin else "--config FILE"
    message = (
        f"no ctxlint configuration found in {start} or above: add a [tool.ctxlint] "
        f"table to pyproject.toml or pass {option}"
    )
    top, below = configs_below(start)
    if below:
        named = ", ".join(_shown(p) for p in below[:_SHOWN])
        more = f" (and {len(below) - _SHOWN} more)" if len(below) > _SHOWN else ""
        folder = below[0].parent
        if pytest_plugin:
            # the config, not its folder: --ctxlint-root makes the folder the tree,
            # in place of the config's own `root` (a config in apps/x with
            # root = "../.." then finds its src roots nowhere)
            message += (
                f"; below it, {named}{more} has one: pass --ctxlint-config {_shown(below[0])}"
            )
            return ConfigError(message)
        # pre-commit runs hooks from the repository's root, whatever the working folder
        hook = folder.relative_to(top).as_posix()
        message += (
            f"; below it, {named}{more} has one: give its folder as PATH "
            f"(`ctxlint {command} {_shown(folder)}`; in .pre-commit-config.yaml, `args: [{hook}]`)"
        )
    return ConfigError(message)


def _shown(path: Path) -> str:
    """`path` as typed from the working folder when under it, else absolute."""
    try:
        rel = path.relative_to(Path.cwd().resolve())
    except ValueError:
        return str(path)
    return rel.as_posix() or "."
