"""Which config file and tree a command names, and its cache folder: what
`ctxlint check` needs to find a running daemon's socket before anything else
is imported (cli.quick_check), and what the session's resolve starts from.
Light on purpose: the config's helpers and the standard library only."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ctxlint.config.nested import missing_config
from ctxlint.config.settings import (
    DEFAULT_CACHE_DIR,
    check_cache_dir,
    confined,
    find_config,
    project_table,
)
from ctxlint.core.errors import ConfigError, did_you_mean

PROFILES = Path(__file__).resolve().parents[1] / "config" / "profiles"


def profile_path(name: str) -> Path:
    known = sorted(p.stem for p in PROFILES.glob("*.toml"))
    if name not in known:
        raise ConfigError(
            f"unknown profile {name!r} (known: {', '.join(known)})" + did_you_mean(name, known)
        )
    return PROFILES / f"{name}.toml"


def config_file(
    given_paths: Sequence[str],
    *,
    root: str | None = None,
    config: str | None = None,
    profile: str | None = None,
    search_from: str | None = None,
    command: str = "check",
    pytest_plugin: bool = False,
) -> tuple[Path, Path | None, list[Path]]:
    """The config file, the tree (None: the config's root) and the path filters:
    with --config or --profile the first PATH is the tree, else the config is
    the one found from the first PATH (or `search_from`, or the working folder)."""
    paths = [Path(p) for p in given_paths]
    tree = Path(root) if root else None
    config_given = config
    if profile:
        if config_given:
            raise ConfigError("give --profile or --config, not both")
        config_given = str(profile_path(profile))
    if config_given:
        cfg_path = Path(config_given)
        if not cfg_path.is_file():
            raise ConfigError(f"config file {cfg_path} {_not_a_config(cfg_path)}")
        if paths and tree is None:
            if not paths[0].is_dir():
                raise ConfigError(
                    f"{paths[0]} is not a folder (with --config, PATH is the tree to check)"
                )
            tree, paths = paths[0], paths[1:]
        return cfg_path, tree, paths
    start = Path(search_from) if search_from else None
    # where the path is as typed (a link to a file elsewhere stays in its project),
    # then where it leads
    asked = start or (paths[0] if paths else Path.cwd())
    here = Path(os.path.abspath(asked))
    found = find_config(here) or find_config(asked.resolve())
    if found is None:  # name the configs below, for a project in a subfolder
        raise missing_config(
            here if here.is_dir() else here.parent, command, pytest_plugin=pytest_plugin
        )
    return found, tree, paths


def _not_a_config(path: Path) -> str:
    """Why `--config PATH` names no config file."""
    if path.is_dir():
        return "is a folder: give the config file in it (pyproject.toml or ctxlint.toml)"
    return "is not a regular file" if path.exists() else "not found"


def cache_folder(cfg_path: Path, tree: Path | None, given: str | None) -> Path:
    """The cache folder a config names for a tree (`given`: --cache-dir), as
    config.settings.load_config makes it; ConfigError where it would refuse
    it (tests/cli/test_daemon_quick.py holds the two together)."""
    if given:
        return Path(given).resolve()
    table, _, project_root = project_table(cfg_path, tree)
    value = table.get("cache-dir", DEFAULT_CACHE_DIR)
    check_cache_dir(value, project_root)
    return confined("cache-dir", value, project_root)
