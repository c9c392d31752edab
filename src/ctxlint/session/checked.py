"""The check: one engine run over a setup's tree, compared with its baseline,
filtered to what the request reports (a `Checked`).

Nothing here prints but the warnings the request routes through its `warn`
and the disabled rules its policy says.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ctxlint.baseline.ratchet import Baseline, compare, load_baseline
from ctxlint.config.settings import Config
from ctxlint.core.errors import CtxlintError
from ctxlint.core.findings import FileError, Finding, Result, StaleEntry
from ctxlint.core.noqa import noqa_hint
from ctxlint.core.pysource import SourceError, decode
from ctxlint.core.shown_paths import opener
from ctxlint.discover.files import SourceFile, why_unchecked
from ctxlint.engine.run import RunOutput
from ctxlint.session.changes import changed_files, tracked_files
from ctxlint.session.request import QUIET, REFUSE
from ctxlint.session.runs import Runs, discover
from ctxlint.session.setup import Setup


@dataclass
class Checked:
    """What a check found: the Result every reporter renders, and the run behind it."""

    setup: Setup
    result: Result  # compared with the baseline, filtered by paths and --changed-since
    out: RunOutput  # the engine's output, unfiltered (findings all "new")
    baseline: Baseline | None  # as loaded before the run (None: no baseline file configured)
    files: list[str]  # the checked files under the path filters


def check(setup: Setup, *, texts: Mapping[str, str] | None = None) -> Checked:
    """Run the engine over the setup's tree, compare with its baseline, filter.

    The request's `report` says what counts: `staged` reports only findings and
    errors in files git's index holds (what a commit holds; the pre-commit
    hook): an untracked file still takes part in the derivations, but its
    findings cannot fail a commit that does not contain it. Stale entries are
    all reported: the baseline is part of the commit. `setup.pins` replaces the
    baseline's pins (the audit history's fallback). `texts` (path -> text)
    stand in for those files' bytes (a language server's unsaved buffers).
    """
    config, report = setup.config, setup.request.report
    folder_errors: list[FileError] = []
    files = discover(setup, folder_errors)
    if report.warn is not None:
        warn_unchecked(config, setup.filters, files, report.warn, setup.exclude_options)
    baseline = load_baseline(config.baseline) if report.baseline and config.baseline else None
    changed = changed_files(config.root, report.changed_since) if report.changed_since else None
    tracked = tracked_files(config.root) if report.staged else None
    pins = baseline.pins if setup.pins is None and baseline is not None else setup.pins
    out = Runs(setup, pins=pins).check(
        files=files, folder_errors=folder_errors, texts=texts, resident=setup.request.run.resident
    )
    if report.warn is not None:
        for rule in setup.selected:  # on every run, whatever the format: which rules checked less
            why = rule.partial(out.program.sets.get(rule.id, {}))
            if why:
                report.warn(f"{rule.id} {rule.name} is partial: {why}")
    if report.disabled != QUIET:
        report_disabled(setup, out.disabled, refuse=report.disabled == REFUSE)
    findings, stale = _compared(setup, out, baseline)
    errors = list(out.errors)
    for kept in (changed, tracked):
        if kept is not None:
            findings = [f for f in findings if f.path in kept]
            errors = [e for e in errors if e.path in kept]
    if changed is not None:
        stale = [s for s in stale if s.path in changed]
    result = _result(setup, out, baseline, findings, stale, errors)
    if report.warn is not None:
        warn_noqa(config, result, report.warn)
    shown_files = [f.rel for f in files if under(f.rel, setup.filters)]
    if setup.filters or changed is not None or tracked is not None:
        result.files_reported = sum(
            (changed is None or p in changed) and (tracked is None or p in tracked)
            for p in shown_files
        )
    return Checked(setup, result, out, baseline, shown_files)


def _compared(
    setup: Setup, out: RunOutput, baseline: Baseline | None
) -> tuple[list[Finding], list[StaleEntry]]:
    """The run's findings as the baseline sees them (new or accepted), and its stale entries."""
    ids = {r.id for r in setup.selected} - set(out.disabled)  # a disabled rule has no stale
    if baseline is None:
        return list(out.findings), []
    return compare(out.findings, baseline, rules=ids)


def _result(
    setup: Setup,
    out: RunOutput,
    baseline: Baseline | None,
    findings: list[Finding],
    stale: list[StaleEntry],
    errors: list[FileError],
) -> Result:
    """The Result every reporter renders: what is under the path filters."""
    config, filters = setup.config, setup.filters
    return Result(
        root=str(config.root),
        rules=[r.info() for r in setup.selected if r.id not in out.disabled],
        findings=[f for f in findings if under(f.path, filters)],
        stale=[s for s in stale if under(s.path, filters)],
        errors=[e for e in errors if under(e.path, filters)],
        files_checked=out.files_checked,
        timings=out.timings,
        config_path=str(config.config_path or ""),
        # a baseline not written yet is empty: the summary says "no baseline", not its name
        baseline_path=str(config.baseline)
        if baseline is not None and config.baseline and Path(config.baseline).is_file()
        else "",
        disabled=dict(out.disabled),
    )


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
    """A checked file's lines as it was checked (its coding declaration or BOM);
    none for a file without `noqa` in any case (a Python source's encoding is
    ASCII-compatible, and no other letter lowers to those four): most files,
    whose decoding was most of a daemon's unchanged answer."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    if b"noqa" not in data.lower():
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
