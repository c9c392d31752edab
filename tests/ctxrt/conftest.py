"""Every ctxrt test starts and ends with an empty runtime context, so a context
published by one test can never mask a missing publish in another."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt.context import reset_context


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()
