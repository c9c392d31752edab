"""Command line: check, baseline update|show, rules, explain, sets, show-settings, audit.

Exit codes: 0 clean, 1 findings or a baseline regression (0 with --exit-zero),
2 usage, config or tool error (one line on stderr, never a traceback).
Options and output follow ruff where they fit (docs/command-line.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlint import __version__
from ctxlint.baseline.ratchet import BaselineError, compare, load_baseline, show, update
from ctxlint.config.selection import select_ids
from ctxlint.config.settings import Config, find_config, load_config, shadowed_configs
from ctxlint.core.console import COLOR_CHOICES, UNWRAPPED, make_console
from ctxlint.core.errors import ConfigError, CtxlintError, did_you_mean
from ctxlint.core.findings import Result
from ctxlint.core.gitcmd import run_git
from ctxlint.core.outfiles import check_writable, write_text
from ctxlint.discover.files import discover, why_unchecked
from ctxlint.discover.roots import check_roots, shown
from ctxlint.engine.registry import load_rules, spec_path
from ctxlint.engine.run import Engine, RunOutput
from ctxlint.program.rule import Rule
from ctxlint.report.audit import add_audit_options, cmd_audit
from ctxlint.report.formats import FORMATS, print_text, print_timings, render

if TYPE_CHECKING:
    from rich.console import Console


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _color(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="style the output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), "
        "always or never",
    )


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", help="tree to check (with --config) or paths to report on")
    p.add_argument("--config", help="config file (pyproject.toml or ctxlint.toml)")
    p.add_argument("--profile", help="a built-in config (e.g. sglang); PATH is the tree to check")
    p.add_argument(
        "--select",
        type=_csv,
        metavar="RULE,...",
        help="only these rules, comma separated: ids, id prefixes (CTX1), names (seed-read), ALL",
    )
    p.add_argument("--ignore", type=_csv, metavar="RULE,...", help="skip these rules (as --select)")
    p.add_argument("--baseline", help="baseline file (default: from config)")
    p.add_argument("--cache-dir", help="fact cache folder (default: from config)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the fact cache")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: cores)")
    _color(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxlint", description="Keep a runtime-context design true: derived sets, exact pins."
    )
    parser.add_argument("--version", action="version", version=f"ctxlint {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="check the tree against the rules and the baseline")
    _common(check)
    check.add_argument(
        "--output-format",
        "--format",
        dest="format",
        choices=FORMATS,
        default="text",
        metavar="FORMAT",
        help="text (findings with code frames; the default), concise (path:line:col: RULE "
        "message), json, sarif, github or junit",
    )
    check.add_argument("--output", "-o", help="write the report to FILE")
    check.add_argument(
        "--quiet", "-q", action="store_true", help="print the findings, nothing else"
    )
    check.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when there are findings (files that fail to parse still exit 2)",
    )
    check.add_argument(
        "--show-details",
        action="store_true",
        help="after each finding's message, the detail its rule gives (e.g. CTX501's)",
    )
    check.add_argument("--strict", action="store_true", help="stale baseline entries fail too (CI)")
    check.add_argument(
        "--statistics",
        action="store_true",
        help="counts per rule instead of findings (text), or added to the JSON",
    )
    check.add_argument("--timings", action="store_true", help="time per phase and per rule")
    check.add_argument(
        "--ignore-errors", action="store_true", help="files that fail to parse do not fail the run"
    )
    check.add_argument(
        "--changed-since",
        metavar="REF",
        help="report only findings in files changed since git REF (the derivations see the whole tree)",
    )

    base = sub.add_parser("baseline", help="update or show the pinned baseline")
    bsub = base.add_subparsers(dest="action", required=True)
    upd = bsub.add_parser(
        "update", help="drop entries no longer found (growth needs --allow-growth)"
    )
    _common(upd)
    upd.add_argument("--allow-growth", action="store_true", help="also pin new findings")
    upd.add_argument("--reason", help="why the baseline grows (stored with the new entries)")
    shw = bsub.add_parser("show", help="print the baseline's entries and counts")
    _common(shw)

    _color(sub.add_parser("rules", help="the rule catalogue"))
    exp = sub.add_parser("explain", help="show a rule's spec")
    exp.add_argument("rule")
    _color(exp)
    sets = sub.add_parser("sets", help="print every derived set the checks use")
    _common(sets)
    sets.add_argument("--format", choices=("text", "json"), default="text")
    settings = sub.add_parser(
        "show-settings",
        help="the resolved settings: config file, roots, excludes, baseline, cache, rules, sets",
    )
    _common(settings)
    settings.add_argument("--format", choices=("text", "json"), default="text")
    audit = sub.add_parser("audit", help="where the tree stands: per rule, folder, set, commit")
    _common(audit)
    add_audit_options(audit)
    return parser


# -- helpers -------------------------------------------------------------------
def resolve_config(args: argparse.Namespace, rules: list[Rule]) -> tuple[Config, list[str]]:
    """The config and the path filters (relative to the project root)."""
    ids = [r.id for r in rules]
    options = {k: v for r in rules for k, v in r.options.items()}
    check_paths(args.paths)
    paths = [Path(p) for p in args.paths]
    root = None
    if getattr(args, "profile", None):
        if args.config:
            raise ConfigError("give --profile or --config, not both")
        args.config = str(profile_path(args.profile))
    if args.config:
        cfg_path = Path(args.config)
        if not cfg_path.is_file():
            raise ConfigError(f"config file {cfg_path} not found")
        if paths:
            if not paths[0].is_dir():
                raise ConfigError(
                    f"{paths[0]} is not a folder (with --config, PATH is the tree to check)"
                )
            root, paths = paths[0], paths[1:]
    else:
        start = paths[0] if paths else Path.cwd()
        cfg_path = find_config(start.resolve())
    given = {
        key: Path(value).resolve()
        for key in ("baseline", "cache_dir")
        if (value := getattr(args, key, None))
    }
    config = load_config(
        cfg_path,
        root=root,
        rule_ids=ids,
        rule_options=options,
        rule_names=[r.name for r in rules],
        **given,
    )
    warn_shadowed(config)
    check_roots(config, lambda folder: _command_for(args, config, folder))
    if "baseline" not in given and config.baseline.is_relative_to(PROFILES):
        # a profile's baseline belongs to the checked tree, never to the installed package
        config = _replace(config, baseline=config.root / config.baseline.relative_to(PROFILES))
    filters = []
    for p in paths:
        try:
            filters.append(p.resolve().relative_to(config.root).as_posix())
        except ValueError:
            raise ConfigError(f"{p} is outside the project root {config.root}") from None
    return config, filters


def check_paths(paths: list[str]) -> None:
    """Every PATH names something that exists (a typo must not pass as "All clear")."""
    for p in paths:
        if p == "-":
            raise ConfigError(
                "reading a file from stdin ('-') is not supported: ctxlint checks a whole "
                "tree; give the paths to report on"
            )
        if not os.path.lexists(p):
            raise ConfigError(f"{p}: no such file or folder")


PROFILES = Path(__file__).resolve().parents[1] / "config" / "profiles"


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


def _command_for(args: argparse.Namespace, config: Config, folder: Path) -> str:
    """The command line that checks `folder` with this config, for an error message."""
    cmd = args.command + (f" {args.action}" if args.command == "baseline" else "")
    cfg = config.config_path
    if cfg is None or cfg.is_relative_to(PROFILES):
        return f"run `ctxlint {cmd} --profile {args.profile} {shown(folder)}`"
    up = Path(os.path.relpath(folder, cfg.parent)).as_posix()
    return (
        f"run `ctxlint {cmd} --config {shown(cfg)} {shown(folder)}`, "
        f'or set root = "{up}" in {shown(cfg)}'
    )


def profile_path(name: str) -> Path:
    known = sorted(p.stem for p in PROFILES.glob("*.toml"))
    if name not in known:
        raise ConfigError(
            f"unknown profile {name!r} (known: {', '.join(known)})" + did_you_mean(name, known)
        )
    return PROFILES / f"{name}.toml"


def _replace(config: Config, **changes: Any) -> Config:
    from dataclasses import replace

    return replace(config, **changes)


def selected_rules(args: argparse.Namespace, config: Config, rules: list[Rule]) -> list[Rule]:
    """The rules to check: the command line's --select/--ignore, else the config's."""
    names = {r.id: r.name for r in rules}
    where = ("--select", "--ignore")
    select, ignore = args.select, args.ignore
    if not select:
        select, where = list(config.select), ("config key 'select'", where[1])
    if not ignore:
        ignore, where = list(config.ignore), (where[0], "config key 'ignore'")
    ids = select_ids(names, select, ignore, where)
    return [r for r in rules if r.id in ids]


def _console(stderr: bool = False, color: str = "auto") -> Console:
    """A rich console (rich is imported when one is made: a warm machine-format run never draws)."""
    return make_console(stderr=stderr, color=color)


def _progress(args: argparse.Namespace) -> Any:
    """One progress bar on stderr, labelled by phase, when stderr is a terminal
    (and the run is not --quiet)."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return None, None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    err = _console(stderr=True, color=getattr(args, "color", "auto"))
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


def run_engine(
    args: argparse.Namespace,
    config: Config,
    rules: list[Rule],
    selected: list[Rule],
    pinned: dict[str, dict[str, Any]] | None = None,
) -> RunOutput:
    bar, callback = _progress(args)
    engine = Engine(
        config,
        rules,
        jobs=args.jobs,
        selected={r.id for r in selected},
        use_cache=not args.no_cache,
        progress=callback,
        pinned=pinned,
        time_rules=getattr(args, "timings", False),
    )
    if bar is None:
        return warn_partial(selected, engine.run())
    with bar:
        return warn_partial(selected, engine.run())


def warn_partial(selected: list[Rule], out: RunOutput) -> RunOutput:
    """Say on every run (stderr, whatever the format) which rules checked less."""
    for rule in selected:
        why = rule.partial(out.program.sets.get(rule.id, {}))
        if why:
            print(f"ctxlint: warning: {rule.id} {rule.name} is partial: {why}", file=sys.stderr)
    return out


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
        raise ConfigError(f"--changed-since {ref}: not a commit in the repository at {root}")
    changed = git(
        "diff", "--no-ext-diff", "--no-textconv", "--name-only", "--relative", commit[0], "--"
    )
    untracked = git("ls-files", "--others", "--exclude-standard")
    if changed is None or untracked is None:
        raise ConfigError(f"--changed-since {ref}: git could not list the changed files")
    return set(changed) | set(untracked)


def warn_unchecked(config: Config, filters: list[str]) -> None:
    """A PATH that selects no checked file says why (excluded, not Python...),
    as ruff warns, instead of passing as a clean report."""
    if not filters:
        return
    try:
        files = discover(config.root, config.src, config.exclude)
    except FileNotFoundError as exc:
        raise CtxlintError(str(exc)) from None
    for rel in filters:
        reason = why_unchecked(config.root, config.src, config.exclude, rel, files)
        if reason is not None:
            print(f"ctxlint: warning: {reason}: not checked", file=sys.stderr)


def say_disabled(disabled: dict[str, str]) -> None:
    """One line on stderr per rule this codebase cannot run yet."""
    for rid, why in sorted(disabled.items()):
        print(f"ctxlint: {rid} disabled: {why}", file=sys.stderr)


def report_disabled(
    args: argparse.Namespace, config: Config, selected: list[Rule], disabled: dict[str, str]
) -> None:
    """The disabled rules said; an error when the user asked for one of them by
    name, or when no selected rule can run at all."""
    say_disabled(disabled)
    # by name: its id or its name, not a prefix or ALL (those select what can run)
    named = {str(x).strip().upper() for x in (*(args.select or ()), *config.select)}
    explicit = sorted(r.id for r in selected if r.id in disabled and named & {r.id, r.name.upper()})
    if explicit:
        raise CtxlintError(
            f"{', '.join(explicit)} selected but cannot run on this codebase: {disabled[explicit[0]]}"
        )
    if selected and all(r.id in disabled for r in selected):
        raise CtxlintError("no selected rule can run on this codebase (see the lines above)")


def _under(path: str, filters: list[str]) -> bool:
    return not filters or any(
        f in (".", "") or path == f or path.startswith(f.rstrip("/") + "/") for f in filters
    )


# -- commands ------------------------------------------------------------------
def cmd_check(args: argparse.Namespace) -> int:
    rules = load_rules()
    config, filters = resolve_config(args, rules)
    selected = selected_rules(args, config, rules)
    if args.output:
        check_writable(args.output, "the report")
    warn_unchecked(config, filters)
    baseline = load_baseline(config.baseline) if config.baseline else None
    changed = changed_files(config.root, args.changed_since) if args.changed_since else None
    out = run_engine(args, config, rules, selected, baseline.pins if baseline is not None else None)
    report_disabled(args, config, selected, out.disabled)
    ids = {r.id for r in selected} - set(out.disabled)  # a disabled rule's entries are not stale
    if baseline is not None:
        findings, stale = compare(out.findings, baseline, rules=ids)
    else:
        findings, stale = out.findings, []
    if changed is not None:
        findings = [f for f in findings if f.path in changed]
        stale = [s for s in stale if s.path in changed]
        out.errors = [e for e in out.errors if e.path in changed]
    result = Result(
        root=str(config.root),
        rules=[r.info() for r in selected if r.id not in out.disabled],
        findings=[f for f in findings if _under(f.path, filters)],
        stale=[s for s in stale if _under(s.path, filters)],
        errors=[e for e in out.errors if _under(e.path, filters)],
        strict=args.strict,
        files_checked=out.files_checked,
        timings=out.timings,
        config_path=str(config.config_path or ""),
        baseline_path=str(config.baseline or "") if baseline is not None else "",
        disabled=dict(out.disabled),
    )
    options = _format_options(args)
    if args.output:
        text = render(result, args.format, **options)
        write_text(args.output, text, "the report")
    elif args.format == "text":
        print_text(result, _console(color=args.color), **options)
    else:
        sys.stdout.write(render(result, args.format, **options))
    if args.timings:
        print_timings(result, _console(stderr=True, color=args.color))
    if result.stale and args.strict and args.format == "text" and not args.quiet:
        _console(stderr=True, color=args.color).print(
            f"{len(result.stale)} stale baseline entr{'y' if len(result.stale) == 1 else 'ies'}: "
            "the code got better; run `ctxlint baseline update` to lock it in",
            markup=False,
        )
    code = result.exit_code(ignore_errors=args.ignore_errors)
    return 0 if code == 1 and args.exit_zero else code


# The switches each output format understands (others reject them, never drop them).
_FORMAT_OPTIONS = {
    "text": ("quiet", "statistics", "show_details"),
    "concise": ("quiet",),
    "json": ("statistics",),
}


def _format_options(args: argparse.Namespace) -> dict[str, bool]:
    known = _FORMAT_OPTIONS.get(args.format, ())
    if args.statistics and "statistics" not in known:
        raise ConfigError(f"--statistics works with --format text or json, not {args.format}")
    if args.show_details and "show_details" not in known:
        raise ConfigError(
            f"--show-details works with --format text, not {args.format} "
            "(the JSON always holds a finding's details)"
        )
    return {k: bool(getattr(args, k)) for k in known}


def cmd_baseline(args: argparse.Namespace) -> int:
    rules = load_rules()
    config, filters = resolve_config(args, rules)
    if filters and args.action == "update":
        raise ConfigError(
            "baseline update works on the whole tree; drop the PATH arguments "
            "(--allow-growth would otherwise pin findings outside them)"
        )
    if config.baseline is None:
        raise ConfigError("no baseline file configured")
    console = _console(color=args.color)
    if args.action == "show":
        console.print(show(load_baseline(config.baseline)).to_text(), markup=False, highlight=False)
        return 0
    if args.allow_growth and not (args.reason or "").strip():
        raise ConfigError('--allow-growth needs --reason "why these findings are accepted"')
    selected = selected_rules(args, config, rules)
    old = load_baseline(config.baseline)
    check_writable(config.baseline, "baseline", make_folders=True)  # before the run
    out = run_engine(args, config, rules, selected, old.pins)
    report_disabled(args, config, selected, out.disabled)
    if out.errors:
        for e in out.errors:
            _console(stderr=True, color=args.color).print(f"{e.path}: {e.message}", markup=False)
        raise CtxlintError("files failed to parse; fix them before updating the baseline")
    ids = {r.id for r in selected} - set(out.disabled)
    # Pins are acknowledged, not ratcheted: updating records what the code
    # derives now, and the change shows up as a reviewed baseline diff.
    pins = {k: v for k, v in old.pins.items() if k not in ids} | out.pins
    findings = [f for f in out.findings if not f.snippet.startswith("pin ")]
    new, report = update(
        old,
        findings,
        allow_growth=args.allow_growth,
        reason=args.reason,
        rules=ids,
        pins=pins,
    )
    if report.changed or not config.baseline.exists():
        new.save(config.baseline)
    rel = os.path.relpath(config.baseline)
    console.print(
        f"{rel}: removed {len(report.removed)}, added {len(report.added)}, kept {report.kept}",
        markup=False,
    )
    if report.left_out:
        console.print(
            f"{len(report.left_out)} new finding(s) were NOT added: fix them, or accept them with "
            '`ctxlint baseline update --allow-growth --reason "..."`',
            markup=False,
        )
        return 1
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="ctxlint rules")
    table.add_column("id")
    table.add_column("name")
    table.add_column("what it reports")
    for r in load_rules():  # Text, never markup: "[dev]" in a summary prints as written
        table.add_row(Text(r.id), Text(r.name), Text(r.summary))
    _console(color=args.color).print(table)
    return 0


PROSE_WIDTH = 100  # `explain` off a terminal without COLUMNS: a spec's paragraphs wrap here


def cmd_explain(args: argparse.Namespace) -> int:
    rules = {r.id: r for r in load_rules()}
    rid = args.rule.upper()
    if rid not in rules:
        raise ConfigError(f"unknown rule {args.rule!r}" + did_you_mean(rid, sorted(rules)))
    path = spec_path(rid)
    console = _console(color=args.color)
    if console.width >= UNWRAPPED:  # prose, not code: rich pads Markdown to the full width
        console.width = PROSE_WIDTH
    from rich.markdown import Markdown  # only `explain` renders Markdown

    if path.is_file():
        from ctxlint.report.spec_markdown import for_reading

        console.print(Markdown(for_reading(path.read_text(encoding="utf-8"))))
    else:  # installed without the source tree: the module docstring is the summary
        module = sys.modules[type(rules[rid]).__module__]
        console.print(
            Markdown(f"# {rid} {rules[rid].name}\n\n{module.__doc__ or rules[rid].summary}")
        )
    return 0


def cmd_sets(args: argparse.Namespace) -> int:
    rules = load_rules()
    config, _ = resolve_config(args, rules)
    selected = selected_rules(args, config, rules)
    out = run_engine(args, config, rules, selected)
    say_disabled(out.disabled)
    vocab = out.program.vocab
    namespaces: dict[str, list[str]] = {}
    for field, ns in vocab.fields.items():
        namespaces.setdefault(ns or "(record)", []).append(field)
    data: dict[str, Any] = {
        "vocabulary": {
            "runtime module": vocab.runtime_module,
            "record class": vocab.record_class,
            "seed accessors": list(vocab.seed_accessors),
            "bag accessors": dict(vocab.bag_accessors),
            "field classes": dict(vocab.field_classes),
            "record fields by namespace": {k: sorted(v) for k, v in sorted(namespaces.items())},
            "record properties": list(vocab.properties),
            "namespaces": list(vocab.namespaces),
            "where it came from": dict(vocab.provenance),
            "missing sets": dict(vocab.missing),
            "disabled rules": dict(sorted(out.disabled.items())),
        },
        **{r.id: out.program.sets.get(r.id, {}) for r in selected if out.program.sets.get(r.id)},
    }
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        return 0
    from rich.text import Text
    from rich.tree import Tree

    # every label is a Text, never markup: derived names and statuses print as
    # written ("install ctxlint[dev]" would otherwise lose its "[dev]")
    tree = Tree(Text(f"derived sets of {config.root}"))
    for section, sets in data.items():
        branch = tree.add(Text(section, style="bold"))
        for name, value in sets.items():
            size = len(value) if isinstance(value, (list, dict)) else None
            node = branch.add(
                Text(f"{name}" + (f" ({size})" if size is not None else f": {value}"))
            )
            if isinstance(value, dict):
                for k, v in value.items():
                    node.add(Text(f"{k}: {', '.join(v) if isinstance(v, list) else v}"))
            elif isinstance(value, list):
                for v in value:
                    node.add(Text(str(v)))
    _console(color=args.color).print(tree)
    return 0


def _size(value: Any) -> int | Any:
    return len(value) if isinstance(value, (list, dict, set, tuple)) else value


def cmd_show_settings(args: argparse.Namespace) -> int:
    """The settings a `check` with the same arguments would use (as ruff's
    --show-settings), and the size of every set the rules derive from the tree."""
    rules = load_rules()
    config, filters = resolve_config(args, rules)
    selected = selected_rules(args, config, rules)
    out = run_engine(args, config, rules, selected)
    baseline = config.baseline
    data: dict[str, Any] = {
        "config file": str(config.config_path or ""),
        "root": str(config.root),
        "paths": filters,
        "src": list(config.src),
        "exclude": list(config.exclude),
        "per-rule-exclude": {k: list(v) for k, v in sorted(config.per_rule_exclude.items())},
        "runtime-module": config.runtime_module,
        "record-class": config.record_class,
        "target-version": config.target_version,
        "baseline": (
            f"{baseline} ({'exists' if baseline.is_file() else 'not written yet'})"
            if baseline is not None
            else ""
        ),
        "cache dir": str(config.cache_dir or "")
        + (" (not used: --no-cache)" if args.no_cache else ""),
        "rule options": dict(sorted(config.options.items())),
        "selected rules": [f"{r.id} {r.name}" for r in selected],
        "files checked": out.files_checked,
        "derived set sizes": {
            rid: {name: _size(v) for name, v in sorted(sets.items())}
            for rid, sets in sorted(out.program.sets.items())
            if sets and rid in {r.id for r in selected}
        },
    }
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")
        return 0
    from rich.text import Text

    console = _console(color=args.color)
    for key, value in data.items():
        line = Text(f"{key}: ", style="bold")
        if isinstance(value, dict) and value:
            console.print(line)
            for k, v in value.items():
                shown = ", ".join(f"{n}={s}" for n, s in v.items()) if isinstance(v, dict) else v
                console.print(Text(f"  {k}: {shown}"))
        elif isinstance(value, list) and value and key == "selected rules":
            console.print(line)
            for v in value:
                console.print(Text(f"  {v}"))
        else:
            shown = ", ".join(map(str, value)) if isinstance(value, (list, dict)) else str(value)
            console.print(line.append(shown or "(none)", style=""))
    return 0


COMMANDS = {
    "show-settings": cmd_show_settings,
    "check": cmd_check,
    "baseline": cmd_baseline,
    "rules": cmd_rules,
    "explain": cmd_explain,
    "sets": cmd_sets,
    "audit": cmd_audit,
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        print(
            f"ctxlint: error: --jobs must be 1 or more worker processes, not {jobs}",
            file=sys.stderr,
        )
        return 2
    try:
        return COMMANDS[args.command](args)
    except (CtxlintError, BaselineError) as exc:
        print(f"ctxlint: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ctxlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug in ctxlint: one line, unless asked for more
        if os.environ.get("CTXLINT_DEBUG"):
            raise
        print(
            f"ctxlint: internal error: {type(exc).__name__}: {exc} "
            "(rerun with CTXLINT_DEBUG=1 for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 2


def run() -> None:
    """The `ctxlint` command: `main()`, then exit without tearing the heap down.

    A run can hold millions of small objects (facts, the call graph); freeing
    them one by one at interpreter exit takes seconds and buys nothing, so
    the process ends right after its output is flushed (as mypy does).
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to say
            pass
    os._exit(code)


if __name__ == "__main__":
    run()

__all__ = ["main", "subprocess"]
