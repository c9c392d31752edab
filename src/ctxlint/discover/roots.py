"""A config's source roots checked before a run, with the command that would work.

A config's `src` roots are relative to its project root (the config file's
folder, its `root` key, or the PATH given with `--config`). When they are not
there, the nearest folder above that holds them all is almost always the tree
that was meant, so the error names it instead of leaving the user to guess;
but only a folder a config's `root` may name (inside the git work tree that
holds the tree, or the working folder): a root above those is refused, and the
walk would otherwise reach `/` (`src = ["lib"]` "found" in `/lib`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ctxlint.config.settings import Config
from ctxlint.core.errors import ConfigError
from ctxlint.core.gitcmd import run_git


def missing_roots(root: Path, src: tuple[str, ...]) -> list[str]:
    return [r for r in src if not (root / r).is_dir()]


def _work_tree(folder: Path) -> Path | None:
    """The git work tree holding `folder` (or its nearest existing parent)."""
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        top = run_git(folder, "rev-parse", "--show-toplevel")
    except OSError:
        return None
    return Path(os.fsdecode(top.stdout.strip())).resolve() if top.returncode == 0 else None


def folder_holding_roots(config: Config) -> Path | None:
    """The nearest folder above the project root under which every src root
    exists, inside the tree's git work tree or the working folder."""
    bounds = [Path.cwd().resolve(), *filter(None, [_work_tree(config.root)])]
    for folder in config.root.parents:
        if not any(folder.resolve().is_relative_to(bound) for bound in bounds):
            return None
        if not missing_roots(folder, config.src):
            return folder
    return None


def shown(path: Path) -> str:
    """`path` as the user would type it: relative to the working folder when shorter."""
    rel = Path(os.path.relpath(path)).as_posix()
    return rel if len(rel) < len(path.as_posix()) else path.as_posix()


def check_roots(config: Config, suggest: Callable[[Path], str]) -> None:
    """Raise a one-line ConfigError when a src root is missing; `suggest(folder)`
    words the fix for the front end in use (a command line, a pytest option)."""
    missing = missing_roots(config.root, config.src)
    if not missing:
        return
    where = f"src root {missing[0]!r} is not a folder under {shown(config.root)}"
    if not config.root.is_dir():  # a `root` key that names no folder: say that first
        where = f"the project root {shown(config.root)} is not a folder, so {where}"
    folder = folder_holding_roots(config)
    if folder is None:
        named = shown(config.config_path) if config.config_path else "the config"
        raise ConfigError(f"{where}; fix `src` in {named}")
    raise ConfigError(
        f"{where} (roots are relative to the project root, the config's folder); "
        f"they are all under {shown(folder)}: {suggest(folder)}"
    )
