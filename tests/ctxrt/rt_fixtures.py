"""Every ctxrt test starts and ends with an empty runtime context, so a context
published by one test can never mask a missing publish in another.

Each test module imports ``fresh_context`` (an autouse fixture). This is not a
``conftest.py`` on purpose: other suites import their own ``conftest`` by module name,
and a second rootless conftest would shadow it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxrt.context import reset_context


@pytest.fixture(autouse=True)
def fresh_context() -> Iterator[None]:
    reset_context()
    yield
    reset_context()
