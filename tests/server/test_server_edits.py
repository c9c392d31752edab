"""Edits through a real LSP client: unsaved buffers count, a change in one
file reaches the documents it changes, a buffer that does not parse keeps its
last good facts, and every step equals `ctxlint check --no-cache` on the same
text (written to disk only to run the batch check on it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lspclient import APP, Serve, Session, batch, batch_keys
from lsprotocol import types

READBACK = f"{APP}/readback.py"
SCHEDULER = f"{APP}/scheduler.py"
NEW_READ = "\n\ndef tp_now() -> int:\n    return get_server_args().tp_size\n"


async def same_as_batch(session: Session, texts: dict[str, str]) -> None:
    """The server's diagnostics equal the batch check of the tree with `texts`."""
    for rel, text in texts.items():
        (session.root / rel).write_text(text)
    assert session.all() == batch_keys(batch(session.root))


@pytest.mark.asyncio
async def test_an_unsaved_edit_is_checked_and_equals_the_batch_check(
    root: Path,
    session: Session,
) -> None:
    text = session.open(READBACK)
    await session.settle()
    edited = text + NEW_READ
    session.change(READBACK, edited)
    await session.settle()
    lines = len(edited.splitlines())
    new = [d for d in session.diagnostics(READBACK) if d.severity == types.DiagnosticSeverity.Error]
    assert [(d.code, d.range.start.line + 1) for d in new] == [("CTX101", lines)]
    assert (root / READBACK).read_text() == text  # the server wrote nothing
    await same_as_batch(session, {READBACK: edited})


@pytest.mark.asyncio
async def test_removing_a_publish_changes_findings_and_clears_them_when_restored(
    session: Session,
) -> None:
    text = session.open(SCHEDULER)
    await session.settle()
    before = session.all()
    publish = '    publish(server_args, role="scheduler")\n'
    assert publish in text
    session.change(SCHEDULER, text.replace(publish, ""))
    await session.settle()
    after = session.all()
    assert after != before
    await same_as_batch(session, {SCHEDULER: text.replace(publish, "")})
    session.change(SCHEDULER, text)  # put back: every document as it was
    await session.settle()
    assert session.all() == before


@pytest.mark.asyncio
async def test_a_buffer_that_does_not_parse_keeps_its_last_good_facts(session: Session) -> None:
    text = session.open(READBACK)
    await session.settle()
    good = session.all()
    session.change(READBACK, text + "\ndef broken(:\n")
    await session.settle()
    diags = session.diagnostics(READBACK)
    syntax = [d for d in diags if d.code is None]
    assert len(syntax) == 1, diags
    assert "syntax error" in syntax[0].message
    assert syntax[0].range.start.line == len(text.splitlines()) + 1
    assert session.all() == good  # its findings, and every other file's, stay


@pytest.mark.asyncio
async def test_baselined_findings_can_be_hidden(serve: Serve) -> None:
    session = await serve(options={"showBaselined": False})
    assert session.all() == {}  # the example's findings are all pinned
    text = session.open(READBACK)
    await session.settle()
    session.change(READBACK, text + NEW_READ)
    await session.settle()
    assert [str(d.code) for d in session.diagnostics(READBACK)] == ["CTX101"]


@pytest.mark.asyncio
async def test_ruff_f811_of_ctx401_reads_the_unsaved_buffer(session: Session) -> None:
    rel = f"{APP}/launcher.py"
    text = session.open(rel)
    await session.settle()
    # the file imports the runtime's get_serving below: another object bound
    # to the accessor name above it (the same accessor again would be one object)
    session.change(rel, "from os.path import join as get_serving\n" + text)
    await session.settle()
    new = [
        (str(d.code), d.range.start.line + 1)
        for d in session.diagnostics(rel)
        if d.severity == types.DiagnosticSeverity.Error
    ]
    assert ("CTX401", 14) in new
    assert "ruff F811" in next(
        d.message
        for d in session.diagnostics(rel)
        if d.code == "CTX401" and d.range.start.line == 13
    )
