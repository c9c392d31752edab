"""Lazy code actions through a real LSP client: a client that resolves edits
(`codeAction.resolveSupport` naming "edit", as Neovim 0.7+ and VS Code do)
gets titles and kinds at once, without the fix planner, and
codeAction/resolve makes each edit: the very edit a client without resolve
support gets in the list. A lazy title the planner does not make is refused
at resolve with the planner's reason, and from then on the titles are the
eager list's. Two servers on the same tree, one client of each kind, hold
the two paths against each other."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lspclient import REPO, Serve, Session, apply
from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcException
from test_server_actions import NEW_READ, READBACK, RUNNER, actions

SUPPRESS_101 = "Suppress CTX101 on this line with a reason"
# a seed read both kinds of fix leave: its leaf's accessor, get_model, names the
# model loader's function in that file (and the file spells the runtime module's
# name, `context`, in a message, so it is not called through the module either)
LEFT_LINE = next(
    n
    for n, line in enumerate((REPO / RUNNER).read_text().splitlines(), 1)
    if "get_server_args().dtype" in line
)


async def both(serve: Serve) -> tuple[Session, Session]:
    """An eager client and a lazy one, each with its server, on one copy."""
    eager, lazy = await asyncio.gather(serve(), serve(resolve=True))
    return eager, lazy


async def resolved(session: Session, action: types.CodeAction) -> types.CodeAction:
    return await session.client.code_action_resolve_async(action)


async def refused(session: Session, action: types.CodeAction) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await resolved(session, action)
    return caught.value


def by_title(found: list[types.CodeAction]) -> dict[str, types.CodeAction]:
    return {a.title: a for a in found}


@pytest.mark.asyncio
async def test_titles_come_without_edits_and_resolve_makes_the_eager_edit(serve: Serve) -> None:
    eager, lazy = await both(serve)
    assert lazy.capabilities.code_action_provider.resolve_provider is True
    for session in (eager, lazy):
        text = session.open(READBACK) + NEW_READ
        await session.settle()
        session.change(READBACK, text)
        await session.settle()
    line = len(text.splitlines())
    now, later = by_title(await actions(eager, line)), by_title(await actions(lazy, line))
    safe = "Fix CTX101 (safe fix): get_server_args().tp_size"
    unsafe = "Fix CTX101 (unsafe fix): get_server_args().tp_size"
    # the planner makes an unsafe fix of this seed read; without it, the
    # titles are each kind of fix CTX101 has
    assert sorted(now) == [unsafe, SUPPRESS_101]
    assert sorted(later) == [safe, unsafe, SUPPRESS_101]
    for title, action in later.items():
        assert action.edit is None and action.data is not None, title
        assert action.kind == types.CodeActionKind.QuickFix
    for title in now:  # a client without resolve support got the edits at once
        assert now[title].edit is not None and now[title].data is None
        assert later[title].is_preferred == now[title].is_preferred
        done = await resolved(lazy, later[title])
        assert done.title == title
        assert done.edit == now[title].edit
    fixed = apply(text, now[unsafe])
    assert fixed.splitlines()[line - 1] == "    return get_parallel().tp_size"
    # the safe fix is refused with the planner's reason ...
    error = await refused(lazy, later[safe])
    assert error.code == types.LSPErrorCodes.RequestFailed
    assert "an unsafe fix" in error.message and "--unsafe" in error.message
    # ... and the titles are now the eager list's
    assert sorted(by_title(await actions(lazy, line))) == sorted(now)


@pytest.mark.asyncio
async def test_a_fix_the_planner_leaves_is_refused_with_its_reason(serve: Serve) -> None:
    eager, lazy = await both(serve)
    for session in (eager, lazy):
        session.open(RUNNER)
        await session.settle()
    now = by_title(await actions(eager, LEFT_LINE, rel=RUNNER))
    later = by_title(await actions(lazy, LEFT_LINE, rel=RUNNER))
    assert sorted(now) == [SUPPRESS_101]  # `ctxlint fix` leaves it, --unsafe or not
    fixes = sorted(t for t in later if t.startswith("Fix CTX101"))
    # the read on that line, with both kinds of fix (neither ruled out yet)
    assert [t.split(":")[0] for t in fixes] == ["Fix CTX101 (safe fix)", "Fix CTX101 (unsafe fix)"]
    for title in fixes:
        error = await refused(lazy, later[title])
        assert error.code == types.LSPErrorCodes.RequestFailed
        assert "leaves it: " in error.message
    assert sorted(by_title(await actions(lazy, LEFT_LINE, rel=RUNNER))) == sorted(now)
    assert (lazy.root / RUNNER).read_text() == (REPO / RUNNER).read_text()  # unwritten


@pytest.mark.asyncio
async def test_a_safe_fix_and_fix_all_resolve_to_the_eager_edits(serve: Serve) -> None:
    eager, lazy = await both(serve)
    for session in (eager, lazy):
        session.open(RUNNER)
        await session.settle()
    (d,) = [d for d in lazy.diagnostics(RUNNER) if d.code == "CTX401"]
    line = d.range.start.line + 1
    now = by_title(await actions(eager, line, rel=RUNNER))
    later = by_title(await actions(lazy, line, rel=RUNNER))
    (fix,) = [t for t in now if t.startswith("Fix CTX401 (safe fix)")]
    assert set(now) < set(later)  # and the unsafe kind, not yet ruled out
    assert later[fix].edit is None and later[fix].is_preferred
    assert (await resolved(lazy, later[fix])).edit == now[fix].edit
    # a safe fix made: the unsafe one is not offered beside it any more
    assert sorted(by_title(await actions(lazy, line, rel=RUNNER))) == sorted(now)
    only = ["source.fixAll.ctxlint"]
    (every_now,) = await actions(eager, 1, only=only, rel=RUNNER)
    (every,) = await actions(lazy, 1, only=only, rel=RUNNER)
    assert every.kind == "source.fixAll.ctxlint" and every.edit is None
    assert every_now.edit is not None
    assert (await resolved(lazy, every)).edit == every_now.edit


@pytest.mark.asyncio
async def test_an_action_whose_finding_went_away_is_refused(root: Path, serve: Serve) -> None:
    session = await serve(resolve=True)
    text = session.open(READBACK) + NEW_READ
    await session.settle()
    session.change(READBACK, text)
    await session.settle()
    line = len(text.splitlines())
    suppress = by_title(await actions(session, line))[SUPPRESS_101]
    session.change(READBACK, text.replace(NEW_READ, "\n"))  # the read is gone
    await session.settle()
    error = await refused(session, suppress)
    assert error.code == JsonRpcContentModified.CODE
    assert "went away" in error.message
    assert (root / READBACK).read_text() + NEW_READ == text  # nothing written
