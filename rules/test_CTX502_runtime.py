"""CTX502 readback-surfaces, on the reference runtime: the example server's three
sibling surfaces (HTTP route, RPC servicer, in-process engine) answer the same
readback; a sibling that drops a key still passes a test of its own, and its
user fails with a ``KeyError`` on the field it lost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ctxrt.context import get_context, publish, reset_context
from ctxrt.record import ServerArgs
from examples.serving_app import launcher, readback
from examples.serving_app.messages import ServerInfoRequest


@pytest.fixture(autouse=True)
def _published() -> Iterator[None]:
    reset_context()
    publish(ServerArgs(model_path="tiny-lm", log_level="warning"), role="tokenizer")
    get_context().override("operator", log_level="debug")
    yield
    reset_context()


def _all() -> dict[str, dict[str, Any]]:
    return {s: readback.answer(ServerInfoRequest(s)) for s in readback.SURFACES}


def test_the_three_siblings_report_the_same_readback() -> None:
    answers = _all()
    assert set(answers) == {"http", "rpc", "engine"}
    normal = {k: json.loads(json.dumps(v, default=str)) for k, v in answers.items()}
    assert normal["http"] == normal["rpc"] == normal["engine"]
    assert launcher._agreement(answers).startswith("http, rpc, engine agree on 4 keys")


def test_a_sibling_that_drops_a_key_passes_its_own_test_and_its_user_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def drifted(self: readback.Engine) -> dict[str, Any]:
        info = readback.server_info()
        del info["effective_overridden"]  # "nobody reads it from the engine"
        return info

    monkeypatch.setattr(readback.Engine, "get_server_info", drifted)
    info = readback.Engine().get_server_info()
    # the engine's own test: the readback and the override log are there
    assert info["resolved_config"]["log_level"] == "warning"
    assert [e["field"] for e in info["overrides"]] == ["log_level"]
    # the HTTP sibling's user is fine, the engine's user loses the field
    assert launcher._explain_overrides(readback.server_info())
    with pytest.raises(KeyError, match="effective_overridden"):
        launcher._explain_overrides(info)
    assert "surfaces disagree: engine" in launcher._agreement(_all())
