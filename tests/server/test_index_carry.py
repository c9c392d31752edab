"""The navigation index carried from one check's program to the next
(program.config_index.Carry, server.index_carry): a statement edit replays
the rules asking the call graph and the resolution model (their outcomes
moved), and the index takes the model's answer from the last index instead of
building both again; only the edited file's sites are built again. Each
carried index must equal one built afresh on the same program, and an edit
that changes what the model answers must not be carried."""

from __future__ import annotations

from pathlib import Path

from lspclient import APP, CONFIG

from ctxlint import session
from ctxlint.program.config_index import ConfigIndex, config_index
from ctxlint.program.resolution import KEY as RESOLUTION
from ctxlint.server import lsp_navigation
from ctxlint.server.checking import load
from ctxlint.server.project import Project

SCHEDULER = f"{APP}/scheduler.py"
ENTRY = "def run_scheduler_process("
# a function of the name of the leaf-reading wrapper (TokenizerManager.config_value)
# that reads no leaf: a name reads a leaf only where every function of it does
RIVAL = "def config_value(name):\n    return name\n"


def same(a: ConfigIndex, b: ConfigIndex) -> bool:
    return all(
        getattr(a, k) == getattr(b, k)
        for k in (
            "leaves",
            "declarations",
            "namespaces",
            "by_path",
            "by_field",
            "by_namespace",
            "writers",
            "readers",
            "declaration_function",
            "returning",
            "accessor_sites",
        )
    )


def _warm_project(root: Path) -> tuple[Project, str]:
    """A project checked twice, the scheduler open in a buffer, its index built."""
    project = Project(load(session.Request(paths=(str(root),), config=str(root / CONFIG))), jobs=1)
    project.refresh()
    text = (root / SCHEDULER).read_text()
    project.edit(SCHEDULER, text)
    project.refresh()
    lsp_navigation.warm(project)
    return project, text


def test_a_statement_edit_carries_the_model_s_answer(root: Path) -> None:
    project, text = _warm_project(root)
    assert project.nav.held is not None and project.nav.held.key is not None
    at = text.index("\n", text.index(ENTRY)) + 1  # the entry's first statement
    for i in range(3):
        project.edit(SCHEDULER, text[:at] + "    _edit = 0\n" * (i + 1) + text[at:])
        project.refresh()
        memo = project.checker.resident.checks
        assert memo is not None and memo.moved, (i, memo.derived)  # (outcomes moved)
        program = project.checked.out.program  # type: ignore[union-attr]
        assert lsp_navigation.ready_soon(project)  # built at once after the check
        reused = project.nav.reused
        index = config_index(program)
        assert project.nav.reused == reused + 1
        assert not program.built(RESOLUTION)  # the model was not built for it
        assert same(index, ConfigIndex(program))  # as built afresh
        assert index.by_field["tp_size"]  # (the control: the index is not empty)


def test_an_edit_that_changes_the_model_s_answer_is_not_carried(root: Path) -> None:
    project, text = _warm_project(root)
    assert "config_value" in config_index(project.checked.out.program).readers  # type: ignore[union-attr]
    project.edit(SCHEDULER, f"{text}\n\n{RIVAL}")
    project.refresh()
    program = project.checked.out.program  # type: ignore[union-attr]
    reused = project.nav.reused
    index = config_index(program)
    assert project.nav.reused == reused  # the call graph's functions changed: asked again
    assert "config_value" not in index.readers
    assert same(index, ConfigIndex(program))


def test_an_edit_of_one_file_s_own_sites_patches_the_last_index(root: Path) -> None:
    """A statement edit that moves the scheduler's sites (lines added above
    its reads, the model's answer carried) patches the last index: the
    scheduler's sites made again and put in their places in each leaf's and
    namespace's list, in path order. An edit of what the index reads across
    files (a new field class) builds it whole. Each equals the index built
    afresh on the same program."""
    project, text = _warm_project(root)
    at = text.index("\n", text.index(ENTRY)) + 1
    below = text.count("\n", 0, at) + 1  # the first line after the edit point
    steps = [
        (text[:at] + "    _edit = 0\n" + text[at:], 1),
        (text[:at] + "    _edit = 0\n" * 3 + text[at:], 3),
        (text, 0),
        (f"{text}\n\nclass Knobs:\n    _NS_PATH = 'knobs'\n", None),  # built whole
    ]
    first = None
    for i, (edited, shift) in enumerate(steps):
        project.edit(SCHEDULER, edited)
        project.refresh()
        program = project.checked.out.program  # type: ignore[union-attr]
        patched = project.nav.patched
        index = config_index(program)
        assert project.nav.patched == patched + (shift is not None), i
        fresh = ConfigIndex(program)
        assert same(index, fresh), i
        assert list(index.by_path) == list(fresh.by_path), i
        # (the control: the scheduler's sites below the edit moved with it)
        lines = [s.span[0] for s in index.by_path[SCHEDULER] if s.span[0] >= below]
        assert lines, i
        first = lines[0] - (shift or 0) if first is None else first
        if shift is not None:
            assert lines[0] == first + shift, i
