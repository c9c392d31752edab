"""`ctxlint server` end to end: a real LSP client (pytest-lsp) drives it over
stdio on a copy of examples/legacy_app; its diagnostics are held against
`ctxlint check --no-cache` on the same text."""

from __future__ import annotations

from pathlib import Path

import pytest
from lspclient import APP, Session, batch, batch_keys, uri
from lsprotocol import types

READBACK = f"{APP}/readback.py"
SEED_READ = '"served_model_name": get_server_args().served_model_name,'


@pytest.mark.asyncio
async def test_first_diagnostics_equal_the_batch_check(root: Path, session: Session) -> None:
    assert session.all() == batch_keys(batch(root))
    diags = session.diagnostics(READBACK)
    assert diags, "readback.py has pinned findings"
    d = diags[0]
    assert d.source == "ctxlint"
    assert str(d.code).startswith("CTX")
    assert d.code_description is not None
    assert d.code_description.href.endswith(f"rules/{d.code}.md")
    assert d.severity == types.DiagnosticSeverity.Hint  # pinned in the baseline


@pytest.mark.asyncio
async def test_a_call_path_finding_names_its_ends_as_related_information(
    root: Path,
    session: Session,
) -> None:
    (d,) = [d for d in session.diagnostics(f"{APP}/scheduler.py") if d.code == "CTX301"]
    assert d.range.start.line + 1 == 52  # Scheduler(server_args), before the publish
    hops = d.related_information or []
    assert [h.location.uri for h in hops] == [
        uri(root / APP / "scheduler.py"),
        uri(root / APP / "model_runner.py"),
    ]
    assert hops[0].message.startswith(
        "call path starts here: run_scheduler_process -> Scheduler.__init__ -> ModelRunner.__init__"
    )
    assert hops[1].location.range.start.line + 1 == 18  # the get_exec() read
    assert hops[1].message == "get_exec() read"
