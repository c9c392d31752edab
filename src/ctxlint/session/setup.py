"""Resolving a request: which config, which tree, which rules (a `Setup`).

The config comes from --config, --profile, or the nearest config above the
first PATH (else the working folder); the command line's overrides replace
its keys; the rules are the selection's. Every problem is a ConfigError with
a one-line message that says what to run instead.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxlint.config.selection import resolve as resolve_selectors
from ctxlint.config.selection import select_ids
from ctxlint.config.settings import (
    Config,
    load_config,
    naming_file,
    shadowed_configs,
)
from ctxlint.core.errors import ConfigError
from ctxlint.core.pysource import unsupported_target
from ctxlint.discover.project import PROFILES, config_file
from ctxlint.discover.roots import check_roots, shown
from ctxlint.engine.registry import load_rules
from ctxlint.engine.run import Progress
from ctxlint.program.rule import Rule
from ctxlint.session.request import PYTEST, QUIET, Overrides, Request


@dataclass
class Setup:
    """A resolved request: the config, the path filters and the rules."""

    config: Config
    filters: list[str]  # paths to report on, relative to config.root ([]: all)
    rules: list[Rule]  # every rule (all extract and derive: the cache ignores the selection)
    selected: list[Rule]  # the rules whose findings count
    named: set[str] = field(default_factory=set)  # ids and names selected by name (upper case)
    # exclude patterns given on the command line -> the option ("--exclude"), for warnings
    exclude_options: dict[str, str] = field(default_factory=dict)
    request: Request = field(default_factory=Request)  # how to run and what to report
    pins: dict[str, dict[str, Any]] | None = None  # in place of the baseline's (None: its own)

    def rerooted(self, root: Path, **changes: Any) -> Setup:
        """The same rules and config, checking another copy of the tree."""
        return replace(self, config=replace(self.config, root=root, **changes))

    def other_tree(
        self,
        root: Path,
        *,
        cache_dir: Path,
        baseline: Path | None,
        pins: dict[str, dict[str, Any]] | None = None,
        use_cache: bool | None = None,
    ) -> Setup:
        """The same rules, config and path filters checking another tree (a
        release, a commit) quietly: no progress, no warning, its disabled rules
        left to the caller; `pins` in place of its baseline's."""
        request = self.request
        run = replace(
            request.run,
            progress=None,
            use_cache=request.run.use_cache if use_cache is None else use_cache,
        )
        report = replace(request.report, disabled=QUIET, warn=None)
        there = self.rerooted(root, cache_dir=cache_dir, baseline=baseline)
        return replace(there, pins=pins, request=replace(request, run=run, report=report))

    def with_progress(self, progress: Progress | None) -> Setup:
        """The same setup, its runs saying how far they are (a progress bar)."""
        run = replace(self.request.run, progress=progress)
        return replace(self, request=replace(self.request, run=run))


def resolve(request: Request, rules: list[Rule] | None = None) -> Setup:
    """The config, path filters and selected rules of a request (ConfigError if unusable)."""
    rules = load_rules() if rules is None else rules
    check_paths(request.paths)
    cfg_path, root, paths = _config_file(request)
    config = _overridden(_load(request, cfg_path, root, rules), request.overrides)
    warn_shadowed(config)
    check_roots(config, lambda folder: rerun_advice(request, config, folder))
    if not request.overrides.baseline and config.baseline.is_relative_to(PROFILES):
        # a profile's baseline belongs to the checked tree, never to the installed package
        config = replace(config, baseline=config.root / config.baseline.relative_to(PROFILES))
    filters = [_project_path(p, config.root) for p in paths]
    chosen = request.rules
    selected = selected_rules(
        rules, config, list(chosen.select), list(chosen.ignore), list(chosen.extend)
    )
    # by name: an id or a name, not a prefix or ALL (those select what can run)
    named = {str(x).strip().upper() for x in (*chosen.select, *config.select, *chosen.extend)}
    given = request.overrides
    given_excludes = {p: "--extend-exclude" for p in given.extend_exclude}
    given_excludes |= {p: "--exclude" for p in given.exclude or ()}
    return Setup(
        config,
        filters,
        rules,
        selected,
        named,
        exclude_options=given_excludes,
        request=request,
    )


def _config_file(request: Request) -> tuple[Path, Path | None, list[Path]]:
    """The config file, the tree (None: the config's root) and the path filters
    (discover.project.config_file)."""
    return config_file(
        request.paths,
        root=request.root,
        config=request.config,
        profile=request.profile,
        search_from=request.search_from,
        command=request.command,
        pytest_plugin=request.command == PYTEST,
    )


def _load(request: Request, cfg_path: Path, root: Path | None, rules: list[Rule]) -> Config:
    """The config file read, with the baseline and cache folder the command line gives."""
    given = {
        key: Path(value).resolve()
        for key, value in (
            ("baseline", request.overrides.baseline),
            ("cache_dir", request.overrides.cache_dir),
        )
        if value
    }
    if "baseline" in given and not request.command.startswith("baseline"):
        if not os.path.lexists(given["baseline"]):
            # read as "no baseline", every accepted finding would count as new: in CI,
            # a typo would fail the build with the whole debt (baseline update writes it)
            raise ConfigError(
                f"baseline {request.overrides.baseline} does not exist (ctxlint baseline "
                f"update --baseline {request.overrides.baseline} writes one)"
            )
    try:
        return load_config(
            cfg_path,
            root=root,
            rule_ids=[r.id for r in rules],
            rule_options={k: v for r in rules for k, v in r.options.items()},
            rule_names=[r.name for r in rules],  # select/ignore may name rules (seed-read)
            **given,
        )
    except ConfigError as exc:  # a tree can hold several configs: say which one is wrong
        raise naming_file(exc, cfg_path) from None


def _overridden(config: Config, given: Overrides) -> Config:
    """The grammar and the exclude the command line gives, in place of the config's."""
    if given.target_version is not None:
        why = unsupported_target(given.target_version)
        if why is not None:
            raise ConfigError(f"--target-version: {why}")
        config = replace(config, target_version=given.target_version)
    if given.exclude is not None or given.extend_exclude:
        base = config.exclude if given.exclude is None else given.exclude
        config = replace(config, exclude=(*base, *given.extend_exclude))
    return config


def rerun_advice(request: Request, config: Config, folder: Path) -> str:
    """How to check `folder` when the tree is not under the config's root: the
    pytest plugin's option, else the command line with this config."""
    cfg = config.config_path
    if request.command == PYTEST:
        if request.config is None and cfg is not None:  # found from --ctxlint-root: name it
            return f"pass --ctxlint-config {shown(cfg)} --ctxlint-root {shown(folder)}"
        return f"pass --ctxlint-root {shown(folder)}"
    if cfg is None or cfg.is_relative_to(PROFILES):
        return f"run `ctxlint {request.command} --profile {request.profile} {shown(folder)}`"
    run = f"run `ctxlint {request.command} --config {shown(cfg)} {shown(folder)}`"
    if request.config is not None and request.paths:
        return run  # the tree was given: the config's `root` was not what failed
    up = Path(os.path.relpath(folder, cfg.parent)).as_posix()
    return f'{run}, or set root = "{up}" in {shown(cfg)}'


def check_paths(paths: tuple[str, ...] | list[str]) -> None:
    """Every PATH names something that exists (a typo must not pass as "All clear")."""
    for p in paths:
        if p == "-":
            raise ConfigError(
                "reading a file from stdin ('-') is not supported: ctxlint checks a whole "
                "tree; give the paths to report on"
            )
        if not os.path.lexists(p):
            raise ConfigError(f"{p}: no such file or folder")


def warn_shadowed(config: Config) -> None:
    """A dedicated ctxlint.toml wins over pyproject.toml (as in ruff); say which is ignored."""
    if config.config_path is None:
        return
    for other in shadowed_configs(config.config_path):
        print(
            f"ctxlint: warning: using {shown(config.config_path)}; the ctxlint table in "
            f"{shown(other)} is ignored",
            file=sys.stderr,
        )


def selected_rules(
    rules: list[Rule],
    config: Config,
    select: list[str],
    ignore: list[str],
    extend_select: list[str] | None = None,
) -> list[Rule]:
    """The rules to check: the command line's --select/--ignore, else the config's;
    --extend-select adds to that select (an empty one is every rule already), and
    the ignore list still applies."""
    names = {r.id: r.name for r in rules}
    where = ("--select", "--ignore")
    if not select:
        select, where = list(config.select), ("config key 'select'", where[1])
    if not ignore:
        ignore, where = list(config.ignore), (where[0], "config key 'ignore'")
    ids = select_ids(names, select, ignore, where)
    if extend_select:
        added = resolve_selectors(extend_select, names, "--extend-select")
        ids |= added - resolve_selectors(ignore, names, where[1])
    if not ids:  # a gate that checks nothing would pass every commit, unnoticed
        picked = " with ".join(
            f"{w} {','.join(v)}" if w.startswith("--") else f"{w} = {json.dumps(list(v))}"
            for w, v in ((where[0], select), ("--extend-select", extend_select), (where[1], ignore))
            if v
        )
        raise ConfigError(
            f"no rule to check: {picked} leaves nothing (`ctxlint rules` lists the rules)"
        )
    return [r for r in rules if r.id in ids]


def _project_path(p: Path, root: Path) -> str:
    """`p` relative to the project root: as typed (a link in the project to a file
    elsewhere is the project's path), else where it leads."""
    for candidate in (Path(os.path.abspath(p)), p.resolve()):
        for base in (root, root.resolve()):
            if candidate.is_relative_to(base):
                return candidate.relative_to(base).as_posix()
    raise ConfigError(f"{p} is outside the project root {root}")
