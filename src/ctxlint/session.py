"""The one check sequence every front end runs: config -> engine -> baseline
compare -> a filtered Result.

`ctxlint check`, `ctxlint baseline update`, `ctxlint sets`/`show-settings`, the
audit (its collect, its history of commits and its trees) and the pytest plugin
all go through `resolve` (which config, which tree, which rules) and `check`
(the run and what the baseline makes of it), so they see the same findings for
the same tree. Front ends parse their own arguments into a `Request` and render
the `Checked` they get back; nothing here prints except the warnings a front end
routes through `warn`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxlint.baseline.ratchet import Baseline, compare, load_baseline
from ctxlint.config.nested import missing_config
from ctxlint.config.selection import resolve as resolve_selectors
from ctxlint.config.selection import select_ids
from ctxlint.config.settings import (
    Config,
    find_config,
    load_config,
    naming_file,
    shadowed_configs,
)
from ctxlint.core.errors import ConfigError, CtxlintError, did_you_mean
from ctxlint.core.findings import FileError, Result
from ctxlint.core.gitcmd import run_git
from ctxlint.core.noqa import noqa_hint
from ctxlint.core.pysource import SourceError, decode, unsupported_target
from ctxlint.core.shown_paths import opener
from ctxlint.discover.files import SourceFile, why_unchecked
from ctxlint.discover.roots import check_roots, shown
from ctxlint.engine.registry import load_rules
from ctxlint.engine.run import Engine, Progress, RunOutput, discover_files
from ctxlint.program.rule import Rule

PROFILES = Path(__file__).resolve().parent / "config" / "profiles"

# What to do about selected rules this codebase cannot run (a vocabulary set is missing):
REFUSE = "refuse"  # say so, and fail when one was named or none can run (check, baseline)
SAY = "say"  # say so (sets)
QUIET = "quiet"  # leave it to the front end (audit, pytest, history, trees)


PYTEST = "pytest --ctxlint"  # Request.command of the pytest plugin: its options in advice


@dataclass(frozen=True)
class Request:
    """Which tree, config and rules a front end asks for (its arguments, parsed)."""

    # PATHs as the command line gives them: the tree to check first when a config
    # file or profile is given, then (or else) the paths to report on
    paths: tuple[str, ...] = ()
    config: str | None = None  # a config file (pyproject.toml or ctxlint.toml)
    profile: str | None = None  # a built-in config (config/profiles/NAME.toml)
    root: str | None = None  # the tree to check, given apart from PATHs (pytest's --ctxlint-root)
    search_from: str | None = None  # where to look for a config (default: first PATH, else cwd)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    baseline: str | None = None  # the baseline file (default: from the config)
    cache_dir: str | None = None  # the fact cache folder (default: from the config)
    # the advice when the tree is not under the config's root: "run ... FOLDER"
    rerun: Callable[[Config, Path], str] | None = None
    command: str = "check"  # the command asked for, in advice ("baseline update"; PYTEST)
    extend_select: tuple[str, ...] = ()  # rules added to the select, as ruff's --extend-select
    exclude: tuple[str, ...] | None = None  # replaces the config's exclude (ruff's --exclude)
    extend_exclude: tuple[str, ...] = ()  # added to the exclude in force (--extend-exclude)
    target_version: str | None = None  # replaces the config's target-version (pyXY)


@dataclass
class Setup:
    """A resolved request: the config, the path filters and the rules."""

    config: Config
    filters: list[str]  # paths to report on, relative to config.root ([]: all)
    rules: list[Rule]  # every rule (all extract and derive: the cache ignores the selection)
    selected: list[Rule]  # the rules whose findings count
    named: set[str] = field(default_factory=set)  # ids and names selected by name (upper case)
    baseline_given: bool = False  # the baseline file was named on the command line
    # exclude patterns given on the command line -> the option ("--exclude"), for warnings
    exclude_options: dict[str, str] = field(default_factory=dict)

    def rerooted(self, root: Path, **changes: Any) -> Setup:
        """The same rules and config, checking another copy of the tree."""
        return replace(self, config=replace(self.config, root=root, **changes))


@dataclass
class Checked:
    """What a check found: the Result every reporter renders, and the run behind it."""

    setup: Setup
    result: Result  # compared with the baseline, filtered by paths and --changed-since
    out: RunOutput  # the engine's output, unfiltered (findings all "new")
    baseline: Baseline | None  # as loaded before the run (None: no baseline file configured)
    files: list[str]  # the checked files under the path filters


# -- resolution ----------------------------------------------------------------
def resolve(request: Request, rules: list[Rule] | None = None) -> Setup:
    """The config, path filters and selected rules of a request (ConfigError if unusable)."""
    rules = load_rules() if rules is None else rules
    check_paths(request.paths)
    paths = [Path(p) for p in request.paths]
    root = Path(request.root) if request.root else None
    config_file = request.config
    if request.profile:
        if config_file:
            raise ConfigError("give --profile or --config, not both")
        config_file = str(profile_path(request.profile))
    if config_file:
        cfg_path = Path(config_file)
        if not cfg_path.is_file():
            raise ConfigError(f"config file {cfg_path} {_not_a_config(cfg_path)}")
        if paths and root is None:
            if not paths[0].is_dir():
                raise ConfigError(
                    f"{paths[0]} is not a folder (with --config, PATH is the tree to check)"
                )
            root, paths = paths[0], paths[1:]
    else:
        start = Path(request.search_from) if request.search_from else None
        # where the path is as typed (a link to a file elsewhere stays in its project),
        # then where it leads
        asked = start or (paths[0] if paths else Path.cwd())
        here = Path(os.path.abspath(asked))
        cfg_path = find_config(here) or find_config(asked.resolve())
        if cfg_path is None:  # name the configs below, for a project in a subfolder
            raise missing_config(
                here if here.is_dir() else here.parent,
                request.command,
                pytest_plugin=request.command == PYTEST,
            )
    given = {
        key: Path(value).resolve()
        for key, value in (("baseline", request.baseline), ("cache_dir", request.cache_dir))
        if value
    }
    if "baseline" in given and not request.command.startswith("baseline"):
        if not os.path.lexists(given["baseline"]):
            # read as "no baseline", every accepted finding would count as new: in CI,
            # a typo would fail the build with the whole debt (baseline update writes it)
            raise ConfigError(
                f"baseline {request.baseline} does not exist (ctxlint baseline update "
                f"--baseline {request.baseline} writes one)"
            )
    try:
        config = load_config(
            cfg_path,
            root=root,
            rule_ids=[r.id for r in rules],
            rule_options={k: v for r in rules for k, v in r.options.items()},
            rule_names=[r.name for r in rules],  # select/ignore may name rules (seed-read)
            **given,
        )
    except ConfigError as exc:  # a tree can hold several configs: say which one is wrong
        raise naming_file(exc, cfg_path) from None
    if request.target_version is not None:
        why = unsupported_target(request.target_version)
        if why is not None:
            raise ConfigError(f"--target-version: {why}")
        config = replace(config, target_version=request.target_version)
    if request.exclude is not None or request.extend_exclude:
        base = config.exclude if request.exclude is None else request.exclude
        config = replace(config, exclude=(*base, *request.extend_exclude))
    warn_shadowed(config)
    rerun = request.rerun or (lambda _config, folder: f"check {shown(folder)} instead")
    check_roots(config, lambda folder: rerun(config, folder))
    if "baseline" not in given and config.baseline.is_relative_to(PROFILES):
        # a profile's baseline belongs to the checked tree, never to the installed package
        config = replace(config, baseline=config.root / config.baseline.relative_to(PROFILES))
    filters = []
    for p in paths:
        filters.append(_project_path(p, config.root))
    selected = selected_rules(
        rules, config, list(request.select), list(request.ignore), list(request.extend_select)
    )
    # by name: an id or a name, not a prefix or ALL (those select what can run)
    named = {
        str(x).strip().upper() for x in (*request.select, *config.select, *request.extend_select)
    }
    given_excludes = {p: "--extend-exclude" for p in request.extend_exclude}
    given_excludes |= {p: "--exclude" for p in request.exclude or ()}
    return Setup(
        config,
        filters,
        rules,
        selected,
        named,
        baseline_given=bool(request.baseline),
        exclude_options=given_excludes,
    )


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


def profile_path(name: str) -> Path:
    known = sorted(p.stem for p in PROFILES.glob("*.toml"))
    if name not in known:
        raise ConfigError(
            f"unknown profile {name!r} (known: {', '.join(known)})" + did_you_mean(name, known)
        )
    return PROFILES / f"{name}.toml"


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


def _not_a_config(path: Path) -> str:
    """Why `--config PATH` names no config file."""
    if path.is_dir():
        return "is a folder: give the config file in it (pyproject.toml or ctxlint.toml)"
    return "is not a regular file" if path.exists() else "not found"


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


# -- the check -----------------------------------------------------------------
def _stderr_warning(message: str) -> None:
    print(f"ctxlint: warning: {message}", file=sys.stderr)


def check(
    setup: Setup,
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    strict: bool = False,
    changed_since: str | None = None,
    staged: bool = False,
    time_rules: bool = False,
    progress: Progress | None = None,
    with_baseline: bool = True,
    pins: dict[str, dict[str, Any]] | None = None,
    disabled: str = REFUSE,
    warn: Callable[[str], None] | None = _stderr_warning,
    engine: Callable[..., Engine] = Engine,
) -> Checked:
    """Run the engine over the setup's tree, compare with its baseline, filter.

    `staged` reports only findings and errors in files git's index holds (what a
    commit holds; the pre-commit hook): an untracked file still takes part in the
    derivations, but its findings cannot fail a commit that does not contain it.
    Stale entries are all reported: the baseline is part of the commit.
    `pins` replaces the baseline's pins (the audit history's fallback);
    `with_baseline=False` neither loads nor compares one (`sets`);
    `warn` gets each warning ("... is partial", "... not checked"), None drops them.
    `engine` makes the engine (Engine's arguments): the language server's reads
    the editor's unsaved buffers in place of those files and starts where its
    last check ended (ctxlint.server.checking).
    """
    config = setup.config
    folder_errors: list[FileError] = []
    files = discover_files(config, folder_errors)
    if warn is not None:
        warn_unchecked(config, setup.filters, files, warn, setup.exclude_options)
    baseline = load_baseline(config.baseline) if with_baseline and config.baseline else None
    changed = changed_files(config.root, changed_since) if changed_since else None
    tracked = tracked_files(config.root) if staged else None
    if pins is None and baseline is not None:
        pins = baseline.pins
    out = engine(
        config,
        setup.rules,
        jobs=jobs,
        selected={r.id for r in setup.selected},
        use_cache=use_cache,
        progress=progress,
        pinned=pins,
        time_rules=time_rules,
        files=files,
        folder_errors=folder_errors,
    ).run()
    if warn is not None:
        for rule in setup.selected:  # on every run, whatever the format: which rules checked less
            why = rule.partial(out.program.sets.get(rule.id, {}))
            if why:
                warn(f"{rule.id} {rule.name} is partial: {why}")
    if disabled != QUIET:
        report_disabled(setup, out.disabled, refuse=disabled == REFUSE)
    ids = {r.id for r in setup.selected} - set(out.disabled)  # a disabled rule has no stale
    if baseline is not None:
        findings, stale = compare(out.findings, baseline, rules=ids)
    else:
        findings, stale = list(out.findings), []
    errors = list(out.errors)
    if changed is not None:
        findings = [f for f in findings if f.path in changed]
        stale = [s for s in stale if s.path in changed]
        errors = [e for e in errors if e.path in changed]
    if tracked is not None:
        findings = [f for f in findings if f.path in tracked]
        errors = [e for e in errors if e.path in tracked]
    filters = setup.filters
    result = Result(
        root=str(config.root),
        rules=[r.info() for r in setup.selected if r.id not in out.disabled],
        findings=[f for f in findings if under(f.path, filters)],
        stale=[s for s in stale if under(s.path, filters)],
        errors=[e for e in errors if under(e.path, filters)],
        strict=strict,
        files_checked=out.files_checked,
        timings=out.timings,
        config_path=str(config.config_path or ""),
        # a baseline not written yet is empty: the summary says "no baseline", not its name
        baseline_path=str(config.baseline)
        if baseline is not None and config.baseline and Path(config.baseline).is_file()
        else "",
        disabled=dict(out.disabled),
    )
    if warn is not None:
        warn_noqa(config, result, warn)
    shown_files = [f.rel for f in files if under(f.rel, filters)]
    if filters or changed is not None or tracked is not None:
        result.files_reported = sum(
            (changed is None or p in changed) and (tracked is None or p in tracked)
            for p in shown_files
        )
    return Checked(setup, result, out, baseline, shown_files)


def _project_path(p: Path, root: Path) -> str:
    """`p` relative to the project root: as typed (a link in the project to a file
    elsewhere is the project's path), else where it leads."""
    for candidate in (Path(os.path.abspath(p)), p.resolve()):
        for base in (root, root.resolve()):
            if candidate.is_relative_to(base):
                return candidate.relative_to(base).as_posix()
    raise ConfigError(f"{p} is outside the project root {root}")


def under(path: str, filters: list[str]) -> bool:
    """Whether `path` is one of the filters or inside one ([]: everything is)."""
    return not filters or any(
        f in (".", "") or path == f or path.startswith(f.rstrip("/") + "/") for f in filters
    )


def warn_unchecked(
    config: Config,
    filters: list[str],
    files: list[SourceFile],
    warn: Callable[[str], None],
    exclude_options: dict[str, str] | None = None,
) -> None:
    """A PATH that selects no checked file says why (excluded, not Python...),
    as ruff warns, instead of passing as a clean report. The PATH is printed as
    seen from the working folder, and an exclude pattern given on the command
    line (`exclude_options`: pattern -> option) is named as that option's."""
    seen = opener(str(config.root))
    for rel in filters:
        reason = why_unchecked(config.root, config.src, config.exclude, rel, files)
        if reason is None:
            continue
        if reason.startswith(rel):  # each reason opens with the project path
            reason = seen(rel) + reason[len(rel) :]
        for pattern, option in (exclude_options or {}).items():
            if reason.endswith(f"(exclude pattern {pattern!r})"):
                reason = reason.replace("excluded by the config", f"excluded by {option}")
        warn(f"{reason}: not checked")


def warn_noqa(config: Config, result: Result, warn: Callable[[str], None]) -> None:
    """A new finding whose line holds `# noqa: RULE` (flake8's and ruff's comment,
    which ctxlint does not read) says how to suppress it. Only the lines of the
    findings are read: the warning is the same on a cold run and a cached one."""
    seen = opener(str(config.root))
    texts: dict[str, list[str]] = {}
    for f in result.new_findings:
        if f.path not in texts:
            texts[f.path] = _lines(config.root / f.path)
        lines = texts[f.path]
        line = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        hint = noqa_hint(f.rule, line) if "noqa" in line.lower() else None
        if hint is not None:
            warn(f"{seen(f.path)}:{f.line}: {hint}")


def _lines(path: Path) -> list[str]:
    """A checked file's lines as it was checked (its coding declaration or BOM)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    try:
        return decode(data).splitlines()
    except SourceError:
        return data.decode("utf-8", errors="replace").splitlines()


def say_disabled(disabled: dict[str, str]) -> None:
    """One line on stderr per rule this codebase cannot run yet."""
    for rid, why in sorted(disabled.items()):
        print(f"ctxlint: {rid} disabled: {why}", file=sys.stderr)


def report_disabled(setup: Setup, disabled: dict[str, str], *, refuse: bool) -> None:
    """The disabled rules said; with `refuse`, an error when the user asked for
    one of them by name, or when no selected rule can run at all."""
    say_disabled(disabled)
    if not refuse:
        return
    explicit = sorted(
        r.id for r in setup.selected if r.id in disabled and setup.named & {r.id, r.name.upper()}
    )
    if explicit:
        raise CtxlintError(
            f"{', '.join(explicit)} selected but cannot run on this codebase: {disabled[explicit[0]]}"
        )
    if setup.selected and all(r.id in disabled for r in setup.selected):
        raise CtxlintError("no selected rule can run on this codebase (see the lines above)")


def tracked_files(root: Path) -> set[str]:
    """The files git's index holds under `root` (tracked or staged: what a commit
    holds; pre-commit sets unstaged edits aside), relative to root."""
    try:
        done = run_git(root, "ls-files", "-z", "--cached")
    except OSError as exc:
        raise ConfigError(f"--staged needs git: {exc}") from None
    if done.returncode != 0:
        raise ConfigError(f"--staged needs a git work tree: {root} is not inside one")
    return {p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


def changed_files(root: Path, ref: str) -> set[str]:
    """Files changed since `ref` (committed or not) plus untracked ones, relative to root."""

    def git(*argv: str) -> list[str] | None:
        try:
            done = run_git(root, *argv)
        except OSError as exc:
            raise ConfigError(f"--changed-since needs git: {exc}") from None
        if done.returncode != 0:
            return None
        return [
            line for line in done.stdout.decode("utf-8", "surrogateescape").splitlines() if line
        ]

    if git("rev-parse", "--is-inside-work-tree") != ["true"]:
        raise ConfigError(f"--changed-since needs a git work tree: {root} is not inside one")
    # a ref that looks like an option would be read as one (`--output=FILE` writes a file)
    commit = (
        None
        if ref.startswith("-")
        else git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    )
    if not commit:
        top = git("rev-parse", "--show-toplevel")  # the repository, not the project's folder
        raise ConfigError(
            f"--changed-since {ref}: not a commit in the repository at {top[0] if top else root}"
        )
    changed = git(
        "diff", "--no-ext-diff", "--no-textconv", "--name-only", "--relative", commit[0], "--"
    )
    untracked = git("ls-files", "--others", "--exclude-standard")
    if changed is None or untracked is None:
        raise ConfigError(f"--changed-since {ref}: git could not list the changed files")
    return set(changed) | set(untracked)
