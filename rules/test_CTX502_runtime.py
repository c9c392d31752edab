"""CTX502 readback-surfaces, on the reference runtime: the example server's sibling
surfaces (the HTTP routes ``/server_info`` and ``/model_info``, and the in-process
``Engine`` methods) answer the same readbacks; a sibling that drops a key still
passes a test of its own, and its user fails with a ``KeyError`` on the field it
lost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ctxrt.context import get_context, publish, reset_context
from ctxrt.record import ServerArgs
from examples.serving_app.engine import Engine
from examples.serving_app.http_server import build_app


@pytest.fixture(autouse=True)
def _published() -> Iterator[None]:
    reset_context()
    publish(ServerArgs(model_path="tiny-lm", log_level="warning"), role="tokenizer")
    get_context().override("operator", log_level="debug")
    yield
    reset_context()


def _engine() -> Engine:
    """An Engine that launched nothing: its readbacks read this process's context,
    not its server processes (starting those would cost seconds per test)."""
    return object.__new__(Engine)


def _http(engine: Engine, path: str) -> dict[str, Any]:
    client = TestClient(build_app(engine))  # no `with`: no lifespan, nothing to stop
    response = client.get(path)
    assert response.status_code == 200
    return response.json()


def _explain(info: dict[str, Any]) -> list[str]:
    """A client of /server_info: each override with the value now in force."""
    return [
        f"{e['field']}: {e['old']!r} -> {e['new']!r}, in force "
        f"{info['effective_overridden'][e['field']]!r}"
        for e in info["overrides"]
    ]


def test_the_siblings_report_the_same_readbacks() -> None:
    engine = _engine()
    for path, method in (
        ("/server_info", engine.get_server_info),
        ("/model_info", engine.get_model_info),
    ):
        assert _http(engine, path) == json.loads(json.dumps(method(), default=str)), path
    assert _explain(_http(engine, "/server_info")) == [
        "log_level: 'warning' -> 'debug', in force 'warning'"
    ]


def test_a_sibling_that_drops_a_key_passes_its_own_test_and_its_user_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = Engine.get_server_info

    def drifted(self: Engine) -> dict[str, Any]:
        info = original(self)
        del info["effective_overridden"]  # "nobody reads it from the engine"
        return info

    monkeypatch.setattr(Engine, "get_server_info", drifted)
    engine = _engine()
    info = engine.get_server_info()
    # the engine's own test: the readback and the override log are there
    assert info["resolved_config"]["log_level"] == "warning"
    assert [e["field"] for e in info["overrides"]] == ["log_level"]
    # the HTTP sibling's user is fine, the engine's user loses the field
    assert _explain(_http(engine, "/server_info"))
    with pytest.raises(KeyError, match="effective_overridden"):
        _explain(info)
