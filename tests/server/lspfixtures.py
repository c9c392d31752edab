"""The one shape of the tests that drive `ctxlint server` through a real LSP
client (lspclient.py): a copy of examples/legacy_app (`root`), servers started
on it (`serve`, with start's options), and each of them stopped when the test
ends, whether its assertions held or not (`session`: one server, defaults).

A plugin that tests/conftest.py names (`pytest_plugins`), not a conftest.py
of this folder: a second module named `conftest` would take the first one's
place in sys.modules, and every `from conftest import REPO` collected after
this folder would fail. lspclient (pytest-lsp, pygls) is imported only when a
fixture is used."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio

if TYPE_CHECKING:
    from lspclient import Serve, Session


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A copy of the runtime, the example and its baseline, its cache warm."""
    from lspclient import copy_legacy_app

    return copy_legacy_app(tmp_path / "repo")


@pytest_asyncio.fixture
async def serve(root: Path) -> AsyncIterator[Serve]:
    """`await serve(*args, **options)`: a server started on `root` as
    lspclient.start starts it, its first diagnostics in; stopped at the end."""
    from lspclient import start, stop

    started: list[Session] = []

    async def serve(*args: str, **options: Any) -> Session:
        session = await start(root, *args, **options)
        started.append(session)
        return session

    yield serve
    await asyncio.gather(*(stop(s) for s in started))


@pytest_asyncio.fixture
async def session(serve: Serve) -> Session:
    """One server on `root`, with the default options."""
    return await serve()
