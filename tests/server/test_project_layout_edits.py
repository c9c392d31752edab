"""server.project's layout edits in one process, on a copy of examples/legacy_app:
a comment edit asks CPython for no verdict (its code is that of a text that
parsed) and leaves the held program's facts of that file stale until the
next check; a text that does not parse still gets its syntax error."""

from __future__ import annotations

from pathlib import Path

import pytest
from lspclient import APP, CONFIG

from ctxlint import session
from ctxlint.core import pysource
from ctxlint.server import project as project_module
from ctxlint.server.checking import load
from ctxlint.server.project import Project

SCHEDULER = f"{APP}/scheduler.py"


def test_a_layout_edit_needs_no_verdict_and_a_code_edit_gets_one(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = load(session.Request(paths=(str(root),), config=str(root / CONFIG)))
    project = Project(setup, jobs=1)
    text = (root / SCHEDULER).read_text()
    project.edit(SCHEDULER, text)
    project.refresh()
    verdicts: list[str] = []
    real = pysource.check

    def counted(source: str, target: str) -> None:
        verdicts.append(source)
        real(source, target)

    monkeypatch.setattr(project_module.pysource, "check", counted)
    lines = text.splitlines(keepends=True)
    moved = "".join([*lines[:56], "\n# the flags\n", *lines[56:]])
    project.edit(SCHEDULER, moved)
    changed = project.refresh()
    assert project.moved_only and changed == {SCHEDULER} and verdicts == []
    assert project.stale == {SCHEDULER} and not project.current
    assert project.texts()[SCHEDULER] == moved and not verdicts
    broken = moved + "\ndef broken(:\n"
    project.edit(SCHEDULER, broken)
    project.refresh()
    assert not project.moved_only and broken in verdicts  # (the check's own reads count too)
    assert project.report(SCHEDULER).errors and project.current
    assert project.texts()[SCHEDULER] == moved  # its last good text is checked
