"""`ctxlint clean`: remove the project's fact cache (ruff's `clean`).

Only what ctxlint writes in the cache folder goes: the sqlite database with its
journal files, and the `.gitignore` ctxlint puts in a folder it creates; then
the folder, if that leaves it empty. A configured `cache-dir` may be a folder
the project uses for other things too, so nothing else in it is touched, and
nothing outside it ever is.
"""

from __future__ import annotations

import argparse
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxlint.cli import options
from ctxlint.core.errors import ConfigError
from ctxlint.discover.roots import shown

DATABASE = "facts.sqlite"
JOURNALS = ("-wal", "-shm", "-journal")  # sqlite's companions of the database
GITIGNORE = "# created by ctxlint\n*\n"  # what the cache writes into a folder it makes


def add_parser(sub: Any, commands: dict[str, Callable[..., int]]) -> None:
    clean = sub.add_parser(
        "clean",
        help="remove the project's fact cache",
        description="Remove the files of the project's fact cache (the config's cache-dir, "
        "or --cache-dir), and the folder when nothing else is in it.",
    )
    clean.add_argument("paths", nargs="*", help="the project's folder (default: from here)")
    clean.add_argument(
        "--config", metavar="FILE", help="config file (pyproject.toml or ctxlint.toml)"
    )
    clean.add_argument("--profile", metavar="NAME", help="a built-in config; PATH is the tree")
    clean.add_argument("--cache-dir", metavar="DIR", help="the cache folder to clean")
    options.add_color(clean)
    commands["clean"] = cmd_clean


def cache_files(folder: Path) -> list[Path]:
    """The files ctxlint wrote in `folder` (regular files only, never a link)."""
    names = [DATABASE, *(DATABASE + j for j in JOURNALS), ".gitignore"]
    found = []
    for name in names:
        path = folder / name
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        if name == ".gitignore" and _read(path) != GITIGNORE:
            continue  # the project's own .gitignore
        found.append(path)
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def cmd_clean(args: argparse.Namespace) -> int:
    config = options.resolve(args).config
    folder = config.cache_dir
    if folder is None:
        raise ConfigError("no cache folder configured")
    console = options.console(color=args.color)
    where = shown(folder)
    if not folder.is_dir() or folder.is_symlink():
        console.print(f"no cache at {where}", markup=False)
        return 0
    files = cache_files(folder)
    try:
        for path in files:
            path.unlink()
        left = sorted(p.name for p in folder.iterdir())
        if not left:
            folder.rmdir()
    except OSError as exc:
        raise ConfigError(f"cannot clean the cache {where}: {exc.strerror or exc}") from None
    if left:
        console.print(
            f"removed {len(files)} cache file{'' if len(files) == 1 else 's'} from {where}; "
            f"the folder stays: it holds {', '.join(left[:3])}{' ...' if len(left) > 3 else ''}",
            markup=False,
        )
    else:
        console.print(f"removed the cache {where}", markup=False)
    return 0
