"""Fingerprints: stable under unrelated edits and moves within a file, changed
by edits to the offending code, distinct for identical findings in one scope."""

from __future__ import annotations

from pathlib import Path

from helpers import run_engine, write

from ctxlint.core.findings import Finding
from ctxlint.engine.run import fingerprint

HEADER = "from specrt.context import get_server_args\n\n\n"
ALPHA = "def alpha() -> int:\n    return get_server_args().tp_size\n\n\n"
BETA = "def beta() -> str:\n    return get_server_args().model_path\n\n\n"


def _findings(project: Path, source: str, path: str = "app/m.py") -> list[Finding]:
    write(project, {path: source})
    return run_engine(project, select={"CTX101"}).findings


def _by_scope(findings: list[Finding]) -> dict[str, tuple[str, int]]:
    return {f.scope: (f.fingerprint, f.line) for f in findings}


def test_lines_added_above_do_not_move_fingerprints(project: Path) -> None:
    """Only the line numbers change when unrelated code is inserted above."""
    before = _by_scope(_findings(project, HEADER + ALPHA + BETA))
    padding = "import os\n\nX = 1\n\n\ndef helper() -> None:\n    pass\n\n\n"
    after = _by_scope(_findings(project, HEADER + padding + ALPHA + BETA))
    assert {k: fp for k, (fp, _) in before.items()} == {k: fp for k, (fp, _) in after.items()}
    assert all(after[k][1] == before[k][1] + 9 for k in before)


def test_moving_a_function_within_the_file_keeps_fingerprints(project: Path) -> None:
    """Reordering functions changes nothing but positions."""
    before = _by_scope(_findings(project, HEADER + ALPHA + BETA))
    after = _by_scope(_findings(project, HEADER + BETA + ALPHA))
    assert {k: fp for k, (fp, _) in before.items()} == {k: fp for k, (fp, _) in after.items()}
    assert before["alpha"][1] < before["beta"][1] and after["alpha"][1] > after["beta"][1]


def test_editing_the_offending_code_changes_its_fingerprint_only(project: Path) -> None:
    """A changed snippet is a different finding; the untouched one keeps its print."""
    before = _by_scope(_findings(project, HEADER + ALPHA + BETA))
    edited = ALPHA.replace(".tp_size", ".dp_size")
    after = _by_scope(_findings(project, HEADER + edited + BETA))
    assert after["alpha"][0] != before["alpha"][0]
    assert after["beta"][0] == before["beta"][0]


def test_renaming_the_enclosing_function_changes_the_fingerprint(project: Path) -> None:
    """The scope qualname is part of the identity."""
    before = _by_scope(_findings(project, HEADER + ALPHA))
    after = _by_scope(_findings(project, HEADER + ALPHA.replace("alpha", "gamma")))
    assert after["gamma"][0] != before["alpha"][0]


def test_same_code_in_another_file_is_another_finding(project: Path) -> None:
    """The path is part of the identity."""
    a = _findings(project, HEADER + ALPHA, path="app/a.py")
    b = [f for f in _findings(project, HEADER + ALPHA, path="app/b.py") if f.path == "app/b.py"]
    assert a[0].fingerprint != b[0].fingerprint


def test_identical_reads_in_one_scope_are_distinct_by_occurrence(project: Path) -> None:
    """Two identical reads in one scope get two fingerprints, ordered by position."""
    source = HEADER + (
        "def twice() -> int:\n"
        "    a = get_server_args().tp_size\n"
        "    b = get_server_args().tp_size\n"
        "    return a + b\n"
    )
    first, second = _findings(project, source)
    assert first.snippet == second.snippet
    assert first.fingerprint != second.fingerprint
    assert first.fingerprint == fingerprint("CTX101", "app/m.py", "twice", first.snippet, 0)
    assert second.fingerprint == fingerprint("CTX101", "app/m.py", "twice", first.snippet, 1)


def test_fingerprints_have_no_line_numbers(project: Path) -> None:
    """The same finding at a different line has the same fingerprint, computed from
    rule, path, scope, snippet and occurrence index alone."""
    (f,) = _findings(project, HEADER + ALPHA)
    assert f.fingerprint == fingerprint("CTX101", "app/m.py", "alpha", f.snippet, 0)


def test_reindenting_a_multiline_node_keeps_its_fingerprint(project: Path) -> None:
    """Moving code into a block re-indents it; the normalised snippet is the same."""
    flat = HEADER + (
        "def f() -> int:\n"
        "    return getattr(\n"
        "        get_server_args(),\n"
        '        "tp_size",\n'
        "    )\n"
    )
    nested = HEADER + (
        "def f() -> int:\n"
        "    if True:\n"
        "        return getattr(\n"
        "                get_server_args(),\n"
        '                "tp_size",\n'
        "        )\n"
        "    return 0\n"
    )
    (before,) = _findings(project, flat)
    (after,) = _findings(project, nested)
    assert before.snippet == 'getattr( get_server_args(), "tp_size", )'
    assert after.fingerprint == before.fingerprint
