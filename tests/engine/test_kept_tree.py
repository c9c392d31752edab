"""A resident run parses an edited buffer's one changed statement into the
module it kept (engine.kept_tree, facts.splice): the check must be a no-cache
run's of the same text, edit after edit."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_check_memo import LEGACY, _no_cache, _session, _shown, _warm_copy
from test_moved_outcomes import _body_starts, _with_statement

from ctxlint import session


@pytest.mark.parametrize(
    ("example", "rel"),
    [
        ("legacy_app", f"{LEGACY}/scheduler.py"),
        ("serving_app", "examples/serving_app/scheduler.py"),
    ],
)
def test_statement_edits_spliced_into_the_kept_module_check_as_no_cache(
    example: str, rel: str, tmp_path: Path
) -> None:
    """One, two, three statements added at the top of a function (as
    bench_server edits), then a literal in the first changed: each check's
    findings are a no-cache run's, and all but the first edit are spliced."""
    root = _warm_copy(example, tmp_path)
    setup = _session(root)
    original = (root / rel).read_text()
    opened = session.check(setup, texts={rel: original})  # the buffer opened
    assert opened.out.files_parsed == 0  # every file's facts from the warm cache
    kept = setup.request.run.resident.kept
    assert kept is not None
    line, indent = _body_starts(original)[-1]
    texts = [_with_statement(original, line, indent, n) for n in (1, 2, 3)]
    texts.append(texts[-1].replace("_ctxlint_moved = 1", "_ctxlint_moved = 2", 1))
    walked: list[tuple[int, str]] = []
    for text in texts:
        out = session.check(setup, texts={rel: text}).out
        assert kept.kept is not None
        walked.append((kept.kept.walked_from, kept.kept.generated))
        (root / rel).write_text(text)
        want = _no_cache(root)
        (root / rel).write_text(original)
        assert _shown(out) == _shown(want)
        assert [(f.span, f.details) for f in out.findings] == [
            (f.span, f.details) for f in want.findings
        ]
        assert out.pins == want.pins
    assert (kept.parsed, kept.spliced) == (1, len(texts) - 1)
    # the first edit is a whole parse (the opened text was the cache's), which
    # keeps the walk's state at the statement it changed in the opened text
    # (Kept.hint); every splice walks from the edited statement on
    # (facts.resume); no splice's positions generate the module
    assert walked[0] == (0, "module"), walked
    assert all(at > 0 for at, _ in walked[1:]), walked
    assert all(generated != "module" for _, generated in walked[1:]), walked
    assert kept.path == rel and kept.kept is not None and kept.kept.module.code == texts[-1]
    setup.request.run.resident.forget()  # released with the resident's state
    assert kept.kept is None


@pytest.mark.parametrize(
    ("example", "rel"),
    [
        ("legacy_app", f"{LEGACY}/scheduler.py"),
        ("serving_app", "examples/serving_app/scheduler.py"),
    ],
)
def test_disk_edits_through_the_daemons_resident_splice_and_move(
    example: str, rel: str, tmp_path: Path
) -> None:
    """The daemon's runs (a resident that keeps no program; the edits written
    to disk, no buffers): the first edit's file is parsed whole and kept, every
    later edit is spliced, and from the second the rules reading that file's
    moved facts are replayed moved, not derived; each check is a no-cache run's."""
    root = _warm_copy(example, tmp_path)
    setup = _session(root)
    resident = setup.request.run.resident
    assert resident is not None and resident.kept is not None and resident.checks is not None
    resident.keep_program = False  # the daemon's (cli.daemon_checks)
    session.check(setup)  # its first check, before any edit
    original = (root / rel).read_text()
    line, indent = _body_starts(original)[-1]
    texts = [_with_statement(original, line, indent, n) for n in (1, 2, 3)]
    moved = []
    for text in texts:
        (root / rel).write_text(text)
        out = session.check(setup).out
        want = _no_cache(root)
        assert _shown(out) == _shown(want)
        assert [(f.span, f.details) for f in out.findings] == [
            (f.span, f.details) for f in want.findings
        ]
        assert out.pins == want.pins
        moved.append(resident.checks.moved)
    assert (resident.kept.parsed, resident.kept.spliced) == (1, len(texts) - 1)
    assert not moved[0] and all(moved[1:]), moved
