"""Code actions through a real LSP client: the quick fix is `ctxlint fix`'s own
rewrite of that one finding, labelled safe or unsafe; source.fixAll.ctxlint
applies the safe ones; "suppress with a reason" writes the comment and leaves
the reason to type. The client applies each edit; the server writes nothing."""

from __future__ import annotations

import pytest
from lspclient import APP, Serve, Session, apply, uri
from lsprotocol import types

READBACK = f"{APP}/readback.py"
RUNNER = f"{APP}/model_runner.py"  # its CTX401 (a shadowed accessor name) has a safe fix
NEW_READ = "\n\ndef tp_now() -> int:\n    return get_server_args().tp_size\n"


def new_ones(session: Session) -> list[tuple[str, int]]:
    return [
        (str(d.code), d.range.start.line + 1)
        for d in session.diagnostics(READBACK)
        if d.severity == types.DiagnosticSeverity.Error
    ]


async def actions(
    session: Session, line: int, only: list[str] | None = None, rel: str = READBACK
) -> list[types.CodeAction]:
    here = types.Position(line=line - 1, character=0)
    got = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(session.root / rel)),
            range=types.Range(start=here, end=here),
            context=types.CodeActionContext(
                diagnostics=[d for d in session.diagnostics(rel) if d.range.start.line == line - 1],
                only=only,
            ),
        )
    )
    return [a for a in got or [] if isinstance(a, types.CodeAction)]


async def edited(serve: Serve, *, snippets: bool = False) -> tuple[Session, str, int]:
    session = await serve(snippets=snippets)
    text = session.open(READBACK) + NEW_READ
    await session.settle()
    session.change(READBACK, text)
    await session.settle()
    line = len(text.splitlines())
    assert new_ones(session) == [("CTX101", line)]
    return session, text, line


@pytest.mark.asyncio
async def test_quick_fix_rewrites_the_one_finding_as_ctxlint_fix_does(serve: Serve) -> None:
    session, text, line = await edited(serve)
    found = await actions(session, line)
    # `ctxlint fix` rewrites a seed read only with --unsafe (the value becomes
    # the resolved one): so labelled
    fixes = [a for a in found if a.title.startswith("Fix CTX101")]
    assert [a.title.split(":")[0] for a in fixes] == ["Fix CTX101 (unsafe fix)"]
    assert not fixes[0].is_preferred
    fixed = apply(text, fixes[0])
    assert fixed.splitlines()[line - 1] == "    return get_parallel().tp_size"
    # only that finding: the pinned seed reads above it are left as they were
    assert fixed.count("get_server_args().served_model_name") == 1
    session.change(READBACK, fixed)
    await session.settle()
    assert new_ones(session) == []
    assert "get_parallel().tp_size" not in (session.root / READBACK).read_text()


@pytest.mark.asyncio
async def test_a_safe_quick_fix_and_fix_all(session: Session) -> None:
    text = session.open(RUNNER)
    await session.settle()
    (d,) = [d for d in session.diagnostics(RUNNER) if d.code == "CTX401"]
    found = await actions(session, d.range.start.line + 1, rel=RUNNER)
    fixes = [a for a in found if a.title.startswith("Fix CTX401")]
    assert [a.title.split(":")[0] for a in fixes] == ["Fix CTX401 (safe fix)"]
    assert fixes[0].is_preferred
    assert all(a.kind == types.CodeActionKind.QuickFix for a in found)  # fix-all asked apart
    every = await actions(session, 1, only=["source.fixAll.ctxlint"], rel=RUNNER)
    assert [a.kind for a in every] == ["source.fixAll.ctxlint"]
    assert [a.kind for a in await actions(session, 1, only=["source"], rel=RUNNER)] == [
        "source.fixAll.ctxlint"
    ]
    assert apply(text, every[0]) == apply(text, fixes[0])  # the file's one safe fix
    fixed = apply(text, every[0])
    assert "model_loader_get_model(self.model_path" in fixed
    session.change(RUNNER, fixed)
    await session.settle()
    assert "CTX401" not in {str(d.code) for d in session.diagnostics(RUNNER)}


@pytest.mark.asyncio
async def test_suppress_writes_the_comment_and_leaves_the_reason_to_type(serve: Serve) -> None:
    session, text, line = await edited(serve)
    found = await actions(session, line)
    (suppress,) = [a for a in found if a.title.startswith("Suppress CTX101")]
    suppressed = apply(text, suppress)
    assert suppressed.splitlines()[line - 1].endswith(
        "get_server_args().tp_size  # ctxlint: ignore[CTX101] "
    )
    session.change(READBACK, suppressed)
    await session.settle()
    # suppressed, and CTX001 asks for the reason until it is typed
    assert new_ones(session) == [("CTX001", line)]
    session.change(READBACK, suppressed.rstrip(" \n") + " a dump path\n")
    await session.settle()
    assert new_ones(session) == []


@pytest.mark.asyncio
async def test_suppress_leaves_a_placeholder_where_the_client_takes_snippets(serve: Serve) -> None:
    session, _text, line = await edited(serve, snippets=True)
    found = await actions(session, line)
    (suppress,) = [a for a in found if a.title.startswith("Suppress CTX101")]
    assert suppress.edit is not None and suppress.edit.document_changes
    (change,) = suppress.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    (edit,) = change.edits
    assert isinstance(edit, types.SnippetTextEdit)
    assert edit.snippet.value == "  # ctxlint: ignore[CTX101] ${1:reason}"
