"""The server's start (issue 37, "server start to first diagnostics, cache
warm"): when a `ctxlint check` of the same tree left its outcome in the cache,
the first diagnostics are that outcome replayed, as a warm `ctxlint check`
answers, and the program itself (which navigation and the next edit's check
start from) is built once the editor is quiet, or when a question needs it
first. Through a real LSP client on a copy of examples/legacy_app."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lspclient import Session, batch, batch_keys
from test_server_navigation import READBACK, hover, position

READ = "get_observability().log_level"


def logged(session: Session, prefix: str) -> list[str]:
    return [m.message for m in session.client.log_messages if m.message.startswith(prefix)]


async def built(session: Session, timeout: float = 60.0) -> list[str]:
    loop = asyncio.get_running_loop()
    until = loop.time() + timeout
    while not logged(session, "ctxlint: built the program of"):
        if loop.time() > until:
            raise TimeoutError("the program was not built once the editor was quiet")
        await asyncio.sleep(0.05)
    return logged(session, "ctxlint: built the program of")


@pytest.mark.asyncio
async def test_the_first_diagnostics_replay_the_stored_outcome(
    root: Path, session: Session
) -> None:
    # (root's cache is warm from a `ctxlint check`)
    (first,) = logged(session, "ctxlint: checked")
    assert first.endswith("a stored outcome replayed"), first
    assert session.all() == batch_keys(batch(root))
    # quiet: the program is built once, and it changes no diagnostic
    (line,) = await built(session)
    assert "0 documents changed" in line and "derived again" in line, line
    assert session.all() == batch_keys(batch(root))
    text = session.open(READBACK)
    await session.settle()  # the open's check starts from the program built
    (opened,) = logged(session, "ctxlint: checked")[1:]
    assert "derived again" in opened, opened
    shown = await hover(session, READBACK, position(text, READ, len("get_observability().")))
    assert shown is not None and "log_level" in shown


@pytest.mark.asyncio
async def test_a_question_before_the_quiet_builds_the_program(root: Path, session: Session) -> None:
    assert logged(session, "ctxlint: checked")[0].endswith("a stored outcome replayed")
    assert not logged(session, "ctxlint: built the program of")
    # asked at once (well within the quiet time), on the file as it is on disk
    text = (root / READBACK).read_text(encoding="utf-8")
    shown = await hover(session, READBACK, position(text, READ, len("get_observability().")))
    assert shown is not None and "log_level" in shown
    assert logged(session, "ctxlint: built the program of")


@pytest.mark.asyncio
async def test_a_question_sent_on_the_diagnostics_finds_the_index_built(session: Session) -> None:
    """After a check that built the call graph and the resolution model, the
    navigation index is built as soon as the server's loop is free (queued
    before the check's log line goes out): a hover sent on reading that line
    finds it built. After a layout edit the question checks first, and builds
    the index itself (the server says so: the control)."""
    for_a_question = "ctxlint: the navigation index is built for a question"
    text = session.open(READBACK)
    await session.settle()
    where = position(text, READ, len("get_observability()."))
    assert await hover(session, READBACK, where)
    text += "\n\ndef tp_now() -> int:\n    return get_server_args().tp_size\n"
    session.change(READBACK, text)
    await session.settle()  # on the check's log line, at once
    assert await hover(session, READBACK, where)
    assert logged(session, for_a_question) == []
    session.change(READBACK, text + "# a comment: positions moved, nothing derived\n")
    await session.settle()
    assert await hover(session, READBACK, where)
    assert logged(session, for_a_question) == [for_a_question]
