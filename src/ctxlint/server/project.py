"""The project the server holds resident: the editor's buffers, each file's
findings and errors from the last check, and what an edit changed.

The tree on disk with every open buffer's text in its place is what is
checked (checking.Checker); the findings are those `ctxlint check` gives for
that text. One exception, by design: a buffer that does not parse keeps its
last good text in the check (its facts, and every other file's findings, stay
as they were) and gets one syntax error of its own.

An edit of one buffer that changed only its statement-level layout (comments
at bracket depth 0, blank lines: server.layout_edits) is answered without a
check: the findings stay, their positions in that file moved
(server.moved_findings). The program held keeps that file's facts at their
old positions (`stale`) until the next check, which extracts the file again
since its text differs from the one the checker last read; a navigation
question checks first.
"""

from __future__ import annotations

import logging
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from ctxlint.core import pysource
from ctxlint.core.findings import FileError, Finding, RuleInfo
from ctxlint.program.config_index import carry_into
from ctxlint.server import watch
from ctxlint.server.checking import Checker
from ctxlint.server.index_carry import carry
from ctxlint.server.layout_edits import Layout, changes_code, compare
from ctxlint.server.moved_findings import move, pin_texts
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
    unjudged: set[str] = field(default_factory=set)  # buffers edited since their verdict
    reports: dict[str, FileReport] = field(default_factory=dict)  # path -> what it shows
    rules: list[RuleInfo] = field(default_factory=list)  # the rules the last check ran
    checked: Checked | None = None  # the last check (its program model, its Result)
    # what the reports stand for: the texts and syntax errors of the last check
    # or layout edit, and each such text's Layout (layout_edits), when known
    seen_texts: dict[str, str] = field(default_factory=dict)
    seen_broken: dict[str, str] = field(default_factory=dict)
    layouts: dict[str, Layout] = field(default_factory=dict)
    stale: set[str] = field(default_factory=set)  # facts held at an earlier text's positions
    outside: bool = False  # files may have changed outside the editor: check them
    moved_only: bool = False  # whether the last refresh was a layout edit's
    _pinned: list[str] | None = None  # the last check's pins that hold a number (pin_texts)

    def __post_init__(self) -> None:
        self.checker = Checker(self.setup, use_cache=self.use_cache, jobs=self.jobs)
        # what each check's navigation index takes from the last one's (index_carry)
        self.nav = carry(self.checker.resident)
        self._watch_tree(self.root)

    def _watch_tree(self, root: Path) -> None:
        """The tree's own watch (server.watch), while this project lives: each
        check stats only the files changed on disk since the last one."""
        self._unwatch = weakref.finalize(self, watch.stop, watch.start(root).root)

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
        """The editor holds `text` for `path` (opened, changed or saved). Its
        verdict (does it parse?) waits for the next check or `texts()`: a
        layout edit needs none (its code is that of a text that parsed), and
        a burst of edits within the debounce needs one."""
        self.buffers[path] = text
        self.unjudged.add(path)

    def _judge(self) -> None:
        """The verdict of each buffer edited since (CPython's, as `check` reads it)."""
        for path in sorted(self.unjudged):
            text = self.buffers.get(path)
            if text is None or (self.good.get(path) == text and path not in self.broken):
                continue  # closed, or the text judged already
            try:
                pysource.check(text, self.setup.config.target_version)
            except pysource.SourceError as exc:
                self.broken[path] = str(exc)
            else:
                self.good[path] = text
                self.broken.pop(path, None)
        self.unjudged.clear()

    def close(self, path: str) -> None:
        """The editor closed `path`: the file on disk is checked again."""
        for held in (self.buffers, self.good, self.broken):
            held.pop(path, None)
        self.unjudged.discard(path)
        if self.checker.resident.kept is not None:  # its LibCST module, kept for its edits
            self.checker.resident.kept.release(path)

    def texts(self) -> dict[str, str]:
        """What the check reads in place of files: each buffer's text, its
        last good one when it does not parse (none: the file on disk)."""
        self._judge()
        return {p: self.good[p] for p in self.buffers if p in self.good}

    def reload(self, setup: Setup) -> None:
        """A new config (its file or the baseline changed): checks start afresh."""
        if setup.config.root != self.root:
            self._unwatch()
            self._watch_tree(setup.config.root)
        self.setup = setup
        self.checker = Checker(setup, use_cache=self.use_cache, jobs=self.jobs)
        self.nav = carry(self.checker.resident)
        self.outside = True

    def changed_outside(self) -> None:
        """Files changed outside the editor (a watched file): the next refresh checks."""
        self.outside = True

    # -- the check --------------------------------------------------------------
    @property
    def modelled(self) -> bool:
        """Whether the last check holds the program's facts (navigation asks
        them); a check answered from a stored outcome does not."""
        return self.checked is not None and not self.checked.out.replayed

    @property
    def current(self) -> bool:
        """Whether the program held has every file's facts at the positions the
        buffers have now (a layout edit leaves the edited file's stale)."""
        return self.modelled and not self.stale

    def refresh(self, *, replay: bool = False, full: bool = False) -> set[str]:
        """Check again; the paths whose report changed (cleared ones included).
        With `replay`, a stored outcome of this very tree may answer (the
        start: diagnostics first, the program built when the editor is quiet).
        Unless `full` (or `replay`), an edit of one buffer's layout alone is
        answered by moving its findings (no check)."""
        layout = None  # the edited buffer's new Layout, when the compare found it
        if not (replay or full):
            try:
                moved, layout = self._layout_edit()
            except Exception:  # a fault of its own: said on stderr, and the check answers
                logging.exception("the layout edit failed; checking instead")
                moved = layout = None
            if moved is not None:
                self.moved_only = True
                return moved
        self.moved_only = False
        texts = self.texts()
        if self.checked is not None:
            # what its queries built (the indexes of the rules that ran, the
            # navigation index) is let go before the check, not after: the
            # check's own are built meanwhile, and the process's high-water
            # mark is that of both at once. Built again if a question asks
            # before a check succeeds.
            self.checked.out.program.release()
            if self.modelled:
                carry_into(self.checked.out.program, self.nav)
        checked = self.checker.check(texts, replay=replay)
        self.checked = checked
        if self.modelled:
            carry_into(checked.out.program, self.nav)
        self._pinned = None
        self.stale.clear()
        self.outside = False
        self.layouts = {
            p: self.layouts[p]
            for p in texts
            if p in self.layouts and self.seen_texts.get(p) == texts[p]
        }
        if layout is not None and texts.get(layout[0]) == layout[1]:  # (the text parsed)
            self.layouts[layout[0]] = layout[2]
        self.seen_texts, self.seen_broken = dict(texts), dict(self.broken)
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

    def _layout_edit(self) -> tuple[set[str] | None, tuple[str, str, Layout] | None]:
        """When one buffer changed, and only in its layout: its findings (and
        any quoting its lines) moved, and the paths whose report changed.
        Else None (a check is needed), with the edited buffer's new Layout
        when the compare found it (kept for its next edit). Its new text
        parses, as the one last checked did: the same code (no verdict asked)."""
        buffers, seen = self.buffers, self.seen_texts
        if (
            not self.modelled
            or self.outside
            or self.broken
            or self.seen_broken
            or buffers.keys() != seen.keys()
        ):
            return None, None
        edited = [p for p, t in buffers.items() if t is not seen[p] and t != seen[p]]
        if len(edited) != 1 or self.report(edited[0]).errors:
            return None, None
        path = edited[0]
        old, new = seen[path], buffers[path]
        if path not in self.layouts and changes_code(old, new):
            return None, None  # (a statement edit: no whole tokenize for a Layout)
        layout = self.layouts.get(path) or Layout.of(old)
        if layout is None:
            return None, None
        compared = compare(old, new, layout)
        kept = (path, new, compared.layout) if compared.layout is not None else None
        if compared.moved is None:
            return None, kept
        if self._pinned is None:
            assert self.checked is not None
            self._pinned = pin_texts(self.checked.out.pins)
        held = {p: r.findings for p, r in self.reports.items() if r.findings}
        after = move(held, path, compared.moved, self._pinned)
        if after is None:
            return None, kept
        for p, findings in after.items():
            self.reports[p] = FileReport(findings, self.reports[p].errors)
        self.good[path] = new
        self.unjudged.discard(path)
        self.seen_texts = self.texts()  # (any other buffer edited since: its text as seen)
        self.layouts[path] = compared.layout  # type: ignore[assignment]
        self.stale.add(path)
        return set(after), kept

    def prepare_layouts(self) -> None:
        """Tokenize each buffer checked whose Layout is not known (when the
        editor is quiet), so that its first layout edit tokenizes little."""
        for path, text in self.seen_texts.items():
            if path not in self.layouts:
                layout = Layout.of(text)
                if layout is not None:
                    self.layouts[path] = layout

    def report(self, path: str) -> FileReport:
        return self.reports.get(path, EMPTY)

    def failed_rules(self) -> dict[str, str]:
        """Rules that raised (left out of the checks since), with their traceback."""
        return dict(self.checker.failed)
