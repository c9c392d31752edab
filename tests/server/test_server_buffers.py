"""Buffers of files discovery does not list, through a real LSP client: a file
the config excludes is opened (it gets no diagnostics, and every other file
keeps its own), and a new file is typed before it is ever saved (it is checked
as the file it will be). Each once failed every check with a KeyError while
the buffer was open."""

from __future__ import annotations

from pathlib import Path

import pytest
from lspclient import APP, Serve, batch, batch_keys, uri
from lsprotocol import types

SEED_READ = (
    "from ctxrt.context import get_server_args\n\n\ndef f():\n    return get_server_args().port\n"
)


@pytest.mark.asyncio
async def test_excluded_and_unsaved_buffers(root: Path, serve: Serve) -> None:
    (root / "tools").mkdir()
    (root / "tools" / "helper.py").write_text(SEED_READ)  # the config excludes "*"
    session = await serve()
    expected = batch_keys(batch(root))
    session.open("tools/helper.py")
    await session.settle()
    new = f"{APP}/brand_new.py"
    session.versions[new] = 1
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri(root / new), language_id="python", version=1, text=SEED_READ
            )
        )
    )
    await session.settle()
    errors = [m.message for m in session.client.log_messages if m.type <= 2]
    assert not errors, errors
    shown = session.all()
    assert "tools/helper.py" not in shown
    assert [k[0] for k in shown.pop(new)] == ["CTX101"]
    assert shown == expected  # every other file as the batch run has it
    (root / new).write_text(SEED_READ)  # saved: the batch run agrees
    assert session.all() == batch_keys(batch(root))
