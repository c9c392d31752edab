"""The legacy example's runner test, written before the migration: it stubs the
accessor and hands in a stand-in record where it should publish the config."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ctxrt.context import publish
from ctxrt.record import ServerArgs
from examples.legacy_app import model_runner
from examples.legacy_app.model_runner import ModelRunner


def test_runner_compiles_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        model_runner, "get_exec", lambda: SimpleNamespace(enable_torch_compile=True)
    )
    publish(ServerArgs(model_path="dummy"), role="scheduler")
    runner = ModelRunner(server_args=SimpleNamespace(model_path="dummy", context_length=8))
    assert runner.compiled
