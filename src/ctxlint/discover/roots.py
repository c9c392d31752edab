"""A config's source roots checked before a run, with the command that would work.

A config's `src` roots are relative to its project root (the config file's
folder, its `root` key, or the PATH given with `--config`). When they are not
there, the nearest folder above that holds them all is almost always the tree
that was meant, so the error names it instead of leaving the user to guess.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ctxlint.config.settings import Config
from ctxlint.core.errors import ConfigError


def missing_roots(root: Path, src: tuple[str, ...]) -> list[str]:
    return [r for r in src if not (root / r).is_dir()]


def folder_holding_roots(config: Config) -> Path | None:
    """The nearest folder above the project root under which every src root exists."""
    for folder in config.root.parents:
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
    folder = folder_holding_roots(config)
    if folder is None:
        raise ConfigError(f"{where}; fix `src` in {config.config_path or 'the config'}")
    raise ConfigError(
        f"{where} (roots are relative to the project root, the config's folder); "
        f"they are all under {shown(folder)}: {suggest(folder)}"
    )
