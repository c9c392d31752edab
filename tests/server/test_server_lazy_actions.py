"""Lazy code actions through a real LSP client: a client that resolves edits
(`codeAction.resolveSupport` naming "edit", as Neovim 0.7+ and VS Code do)
gets titles and kinds only, and codeAction/resolve makes each edit, the very
edit a client without resolve support gets at once. Two servers on the same
tree, one client of each kind, hold the two paths against each other."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lspclient import APP, Session, apply, copy_legacy_app, start, stop
from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcException
from test_server_actions import NEW_READ, READBACK, RUNNER, actions


async def both(tmp_path: Path) -> tuple[Session, Session]:
    """An eager client and a lazy one, each with its server, on one copy."""
    root = copy_legacy_app(tmp_path / "repo")
    eager, lazy = await asyncio.gather(start(root), start(root, resolve=True))
    return eager, lazy


async def resolved(session: Session, action: types.CodeAction) -> types.CodeAction:
    return await session.client.code_action_resolve_async(action)


def by_title(found: list[types.CodeAction]) -> dict[str, types.CodeAction]:
    return {a.title: a for a in found}


@pytest.mark.asyncio
async def test_titles_come_without_edits_and_resolve_makes_the_eager_edit(
    tmp_path: Path,
) -> None:
    eager, lazy = await both(tmp_path)
    try:
        assert lazy.capabilities.code_action_provider.resolve_provider is True
        for session in (eager, lazy):
            text = session.open(READBACK) + NEW_READ
            await session.settle()
            session.change(READBACK, text)
            await session.settle()
        line = len(text.splitlines())
        now, later = by_title(await actions(eager, line)), by_title(await actions(lazy, line))
        # the same titles and kinds: the planner still says what it rewrites, and how safely
        assert (
            sorted(later)
            == sorted(now)
            == [
                "Fix CTX101 (unsafe fix): get_server_args().tp_size",
                "Suppress CTX101 on this line with a reason",
            ]
        )
        for title, action in later.items():
            assert action.edit is None and action.data is not None, title
            assert action.kind == now[title].kind
            assert action.is_preferred == now[title].is_preferred
            # a client without resolve support got the edit at once
            assert now[title].edit is not None and now[title].data is None
            done = await resolved(lazy, action)
            assert done.title == title
            assert done.edit == now[title].edit
        fixed = apply(text, now["Fix CTX101 (unsafe fix): get_server_args().tp_size"])
        assert fixed.splitlines()[line - 1] == "    return get_parallel().tp_size"
    finally:
        await asyncio.gather(stop(eager), stop(lazy))


@pytest.mark.asyncio
async def test_a_safe_fix_and_fix_all_resolve_to_the_eager_edits(tmp_path: Path) -> None:
    eager, lazy = await both(tmp_path)
    try:
        for session in (eager, lazy):
            session.open(RUNNER)
            await session.settle()
        (d,) = [d for d in lazy.diagnostics(RUNNER) if d.code == "CTX401"]
        line = d.range.start.line + 1
        now = by_title(await actions(eager, line, rel=RUNNER))
        later = by_title(await actions(lazy, line, rel=RUNNER))
        assert sorted(later) == sorted(now)
        (fix,) = [t for t in later if t.startswith("Fix CTX401 (safe fix)")]
        assert later[fix].edit is None and later[fix].is_preferred
        assert (await resolved(lazy, later[fix])).edit == now[fix].edit
        only = ["source.fixAll.ctxlint"]
        (every_now,) = await actions(eager, 1, only=only, rel=RUNNER)
        (every,) = await actions(lazy, 1, only=only, rel=RUNNER)
        assert every.kind == "source.fixAll.ctxlint" and every.edit is None
        assert every_now.edit is not None
        assert (await resolved(lazy, every)).edit == every_now.edit
    finally:
        await asyncio.gather(stop(eager), stop(lazy))


@pytest.mark.asyncio
async def test_an_action_whose_finding_went_away_is_refused(tmp_path: Path) -> None:
    root = copy_legacy_app(tmp_path / "repo")
    session = await start(root, resolve=True)
    try:
        text = session.open(READBACK) + NEW_READ
        await session.settle()
        session.change(READBACK, text)
        await session.settle()
        line = len(text.splitlines())
        found = by_title(await actions(session, line))
        suppress = found["Suppress CTX101 on this line with a reason"]
        session.change(READBACK, text.replace(NEW_READ, "\n"))  # the read is gone
        await session.settle()
        with pytest.raises(JsonRpcException, match="no longer applies") as refused:
            await resolved(session, suppress)
        assert refused.value.code == JsonRpcContentModified.CODE
        assert (root / APP / "readback.py").read_text() + NEW_READ == text  # nothing written
    finally:
        await stop(session)
