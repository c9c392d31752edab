"""The project the server holds resident: the editor's buffers, each file's
findings and errors from the last check, and what an edit changed.

The tree on disk with every open buffer's text in its place is what is
checked (checking.Checker); the findings are those `ctxlint check` gives for
that text. One exception, by design: a buffer that does not parse keeps its
last good text in the check (its facts, and every other file's findings, stay
as they were) and gets one syntax error of its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ctxlint.core import pysource
from ctxlint.core.findings import FileError, Finding, RuleInfo
from ctxlint.server.checking import Checker
from ctxlint.session import Checked, Setup


@dataclass(frozen=True)
class FileReport:
    """What one file shows: its findings and the errors that stopped its check."""

    findings: tuple[Finding, ...] = ()
    errors: tuple[FileError, ...] = ()


EMPTY = FileReport()


@dataclass
class Project:
    setup: Setup
    use_cache: bool = True
    jobs: int | None = None
    buffers: dict[str, str] = field(default_factory=dict)  # path -> the editor's text
    good: dict[str, str] = field(default_factory=dict)  # path -> its buffer's last text that parsed
    broken: dict[str, str] = field(default_factory=dict)  # path -> its buffer's syntax error
    reports: dict[str, FileReport] = field(default_factory=dict)  # path -> what it shows
    rules: list[RuleInfo] = field(default_factory=list)  # the rules the last check ran
    checked: Checked | None = None  # the last check (its program model, its Result)

    def __post_init__(self) -> None:
        self.checker = Checker(self.setup, use_cache=self.use_cache, jobs=self.jobs)

    @property
    def root(self) -> Path:
        return self.setup.config.root

    def path_of(self, file: str) -> str | None:
        """A file's project path (forward slashes), None when outside the project."""
        full = Path(os.path.abspath(file))
        for base in (self.root, self.root.resolve()):
            if full.is_relative_to(base):
                return full.relative_to(base).as_posix()
        return None

    # -- the buffers ------------------------------------------------------------
    def edit(self, path: str, text: str) -> None:
        """The editor holds `text` for `path` (opened, changed or saved)."""
        self.buffers[path] = text
        try:
            pysource.check(text, self.setup.config.target_version)
        except pysource.SourceError as exc:
            self.broken[path] = str(exc)
        else:
            self.good[path] = text
            self.broken.pop(path, None)

    def close(self, path: str) -> None:
        """The editor closed `path`: the file on disk is checked again."""
        for held in (self.buffers, self.good, self.broken):
            held.pop(path, None)

    def texts(self) -> dict[str, str]:
        """What the check reads in place of files: each buffer's text, its
        last good one when it does not parse (none: the file on disk)."""
        return {p: self.good[p] for p in self.buffers if p in self.good}

    def reload(self, setup: Setup) -> None:
        """A new config (its file or the baseline changed): checks start afresh."""
        self.setup = setup
        self.checker = Checker(setup, use_cache=self.use_cache, jobs=self.jobs)

    # -- the check --------------------------------------------------------------
    @property
    def modelled(self) -> bool:
        """Whether the last check holds the program's facts (navigation asks
        them); a check answered from a stored outcome does not."""
        return self.checked is not None and not self.checked.out.replayed

    def refresh(self, *, replay: bool = False) -> set[str]:
        """Check again; the paths whose report changed (cleared ones included).
        With `replay`, a stored outcome of this very tree may answer (the
        start: diagnostics first, the program built when the editor is quiet)."""
        checked = self.checker.check(self.texts(), replay=replay)
        self.checked = checked
        self.rules = list(checked.result.rules)
        by_path: dict[str, tuple[list[Finding], list[FileError]]] = {}
        for f in checked.result.findings:
            by_path.setdefault(f.path, ([], []))[0].append(f)
        for e in checked.result.errors:
            if e.path not in self.broken:  # its buffer's own error is said instead
                by_path.setdefault(e.path, ([], []))[1].append(e)
        for path, why in self.broken.items():
            by_path.setdefault(path, ([], []))[1].append(FileError(path, why))
        reports = {p: FileReport(tuple(fs), tuple(es)) for p, (fs, es) in by_path.items()}
        changed = {
            p for p in set(reports) | set(self.reports) if reports.get(p) != self.reports.get(p)
        }
        self.reports = reports
        return changed

    def report(self, path: str) -> FileReport:
        return self.reports.get(path, EMPTY)

    def failed_rules(self) -> dict[str, str]:
        """Rules that raised (left out of the checks since), with their traceback."""
        return dict(self.checker.failed)
