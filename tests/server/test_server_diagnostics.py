"""`ctxlint server` end to end: a real LSP client (pytest-lsp) drives it over
stdio on a copy of examples/legacy_app; its diagnostics are held against
`ctxlint check --no-cache` on the same text."""

from __future__ import annotations

from pathlib import Path

import pytest
from lspclient import APP, batch, batch_keys, copy_legacy_app, start, stop
from lsprotocol import types

READBACK = f"{APP}/readback.py"
SEED_READ = '"served_model_name": get_server_args().served_model_name,'


@pytest.mark.asyncio
async def test_first_diagnostics_equal_the_batch_check(tmp_path: Path) -> None:
    root = copy_legacy_app(tmp_path / "repo")
    session = await start(root)
    try:
        assert session.all() == batch_keys(batch(root))
        diags = session.diagnostics(READBACK)
        assert diags, "readback.py has pinned findings"
        d = diags[0]
        assert d.source == "ctxlint"
        assert str(d.code).startswith("CTX")
        assert d.code_description is not None
        assert d.code_description.href.endswith(f"rules/{d.code}.md")
        assert d.severity == types.DiagnosticSeverity.Hint  # pinned in the baseline
    finally:
        await stop(session)
