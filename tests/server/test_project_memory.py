"""What the server holds stays bounded over many edits (issue 37: "resident
memory after 200 edits ... under 5% growth from edit 20 to edit 200"): in one
process, server.project's Project on a copy of examples/legacy_app, each edit
checked as the server checks it and the navigation index built after it.

Counted, not measured in bytes: with the cyclic GC off, only what is still
referenced survives, so a replaced program that lingers (a cycle through its
memo: the config index holds its program) counts, as does any table keyed by
an edit's content or by a file that has gone."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from lspclient import APP, CONFIG

from ctxlint import session
from ctxlint.server import lsp_navigation
from ctxlint.server.checking import load
from ctxlint.server.project import Project

SCHEDULER = f"{APP}/scheduler.py"
ENTRY = "def run_scheduler_process("
SEED_READ = "from ctxrt.context import get_server_args\n\n\ndef f{i}():\n    return get_server_args().port\n"


def held(project: Project) -> dict[str, int]:
    """How many entries each table the project keeps between edits holds."""
    resident = project.checker.resident
    memo = resident.checks
    assert project.checked is not None and memo is not None
    program = project.checked.out.program
    return {
        "buffers": len(project.buffers) + len(project.good) + len(project.broken),
        "reports": len(project.reports),
        "seen texts": len(project.seen_texts) + len(project.seen_broken),
        "layouts": len(project.layouts),
        "decoded": len(resident.decoded),
        "hashes": len(resident.hashes),
        "rule outcomes": len(memo._last),
        "entry digests": len(memo._placed),
        "round parts": len(memo.rounds.parts),
        "round shares": sum(len(m) for m in memo.rounds.made.values()),
        "program memo": len(program._memo),
        "program per-file": len(program._per_file),
        "kept modules": int(resident.kept is not None and resident.kept.kept is not None),
    }


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def test_what_the_project_holds_is_the_same_after_each_round_of_edits(
    root: Path, no_cyclic_gc: None
) -> None:
    setup = load(session.Request(paths=(str(root),), config=str(root / CONFIG)))
    project = Project(setup, jobs=1)
    text = (root / SCHEDULER).read_text()
    at = text.index("\n", text.index(ENTRY)) + 1  # the entry's first statement starts here
    programs: list[weakref.ref[object]] = []

    def checked() -> None:
        project.refresh()
        lsp_navigation.warm(project)  # what the server does once the editor is quiet
        assert project.checked is not None
        programs.append(weakref.ref(project.checked.out.program))

    project.edit(SCHEDULER, text)
    checked()
    counts = []
    for i in range(4):  # each round: edits whose texts and paths were never seen before
        # a statement on CTX301's call paths: the facts change, rules derive again
        edited = f"{text[:at]}    _edit_{i} = {i}\n{text[at:]}"
        project.edit(SCHEDULER, edited)
        checked()
        kept = project.checker.resident.kept
        assert kept is not None and kept.path == SCHEDULER  # its module, for its next edit
        # a comment appended: a layout edit, answered without a check
        project.edit(SCHEDULER, f"{edited}# round {i}\n")
        project.refresh()
        assert project.moved_only
        # a new file typed (a seed read: the rounds take it in), then closed
        # unsaved: checked, then gone
        new = f"{APP}/scratch_{i}.py"
        project.edit(new, SEED_READ.format(i=i))
        checked()
        assert any(f.path == new for f in project.checked.result.findings)
        project.close(new)
        checked()
        counts.append(held(project))
        # only the last check's program is referenced: each one replaced was freed
        alive = [ref() is not None for ref in programs]
        assert alive == [False] * (len(alive) - 1) + [True]
    assert counts[0]["program memo"] > 0 and counts[0]["program per-file"] > 0
    assert counts[0]["round shares"] > 0 and counts[0]["entry digests"] > 0
    assert counts[1:] == counts[:1] * 3, counts
    assert counts[0]["kept modules"] == 1  # the edited buffer's, one at most
    project.close(SCHEDULER)
    assert kept.path is None and kept.kept is None  # the closed buffer's module let go
